/** Whole lines of a byte stream: `bytes` holds lines `first`, `first + 1`, … (a line is never cut). */
export interface Piece {
  first: number;
  bytes: Buffer;
}

const NEWLINE = 0x0a;

function lineCount(bytes: Buffer): number {
  let n = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

/**
 * Gathers `chunks` into pieces of whole lines, each at most `maxBytes` unless one line alone is
 * longer (it then is a piece by itself), so a reader of a file of any size holds about one piece
 * at a time. Always yields at least one piece (empty for an empty stream); the last one may lack
 * its final newline.
 */
export async function* linePieces(chunks: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Piece> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let first = 0;
  let yielded = false;
  for await (const chunk of chunks) {
    held.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    heldBytes += chunk.byteLength;
    while (heldBytes >= maxBytes) {
      const all = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held, heldBytes);
      // The last line end within the budget, else (one long line) the first after it.
      let cut = all.lastIndexOf(NEWLINE, maxBytes - 1);
      if (cut === -1) cut = all.indexOf(NEWLINE, maxBytes);
      if (cut === -1) {
        held = [all];
        break;
      }
      const bytes = all.subarray(0, cut + 1);
      yield { first, bytes };
      yielded = true;
      first += lineCount(bytes);
      const rest = all.subarray(cut + 1);
      held = rest.length > 0 ? [rest] : [];
      heldBytes = rest.length;
    }
  }
  if (heldBytes > 0 || !yielded) yield { first, bytes: Buffer.concat(held, heldBytes) };
}

/** `bytes` as a stream of one chunk. */
export async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}
