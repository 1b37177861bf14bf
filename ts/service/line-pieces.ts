/** Whole lines of a byte stream: `bytes` holds lines `first`, `first + 1`, … (a line is never cut). */
export interface Piece {
  first: number;
  bytes: Buffer;
}

export const NEWLINE = 0x0a;

/** The newlines in `bytes`: the index, from `first`, of the line after its last one. */
export function lineCount(bytes: Buffer): number {
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
      const rest = all.subarray(cut + 1);
      // Let go of the chunks before the piece is used: they are a second copy of it, and a load
      // runs for seconds while this generator waits.
      held = rest.length > 0 ? [rest] : [];
      heldBytes = rest.length;
      yield { first, bytes };
      yielded = true;
      first += lineCount(bytes);
    }
  }
  if (heldBytes > 0 || !yielded) {
    const bytes = Buffer.concat(held, heldBytes);
    held = [];
    yield { first, bytes };
  }
}

/**
 * The at most `bytes` bytes of `chunks`, copied into one buffer as they arrive, so a whole Memory
 * Package is held once while it loads (found by an audit: gathered by `linePieces` as chunks and
 * then joined, a 182 MB package was held twice through its whole load, 1.35–1.39 GB peak RSS
 * against 1.17–1.18 GB so). `null` when more than `bytes` come; fewer (a package changed after it
 * was verified) is what came.
 */
export async function gathered(chunks: AsyncIterable<Uint8Array>, bytes: number): Promise<Buffer | null> {
  // Its own memory, not a slice of Node's shared pool: it is large, and held for the load.
  const all = Buffer.allocUnsafeSlow(bytes);
  let at = 0;
  for await (const chunk of chunks) {
    if (chunk.byteLength > bytes - at) return null;
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all.subarray(0, at);
}

/** `bytes` as a stream of one chunk. */
export async function* oneChunk(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}
