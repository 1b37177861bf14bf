import { UNDO } from './pdf-filters.js';

/** How far before a `stream` keyword its dictionary may start. */
const DICT_REACH = 4096;

/** The filters a stream dictionary names, in the order they are undone. */
function filters(dict: string): string[] {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)?.[1] ?? '';
  return (filter.match(/\/[A-Za-z0-9]+/g) ?? []).map((n) => n.slice(1));
}

/**
 * Whether the compressed streams of a PDF unpack to more than `budget` bytes between them.
 * pdf.js unpacks a stream into an ArrayBuffer, which a reader's heap limit does not count: a
 * 2 MB file whose one content stream unpacks to 2 GB took the reader's process past 4 GB of
 * memory (and 50 s) with the heap limit at 512 MB. So the streams pdf.js may unpack are
 * unpacked here first, filter by filter (`pdf-filters.ts`), each only until the budget is spent,
 * and none kept. Images are left out: pdf.js does not unpack them to read text, and a scan with a
 * text layer is mostly image. A stream that does not decode is pdf.js's to judge; a filter not
 * undone here ends what is counted of its stream.
 */
export function unpacksPast(buf: Buffer, budget: number): boolean {
  let left = budget;
  let at = 0;
  for (;;) {
    const kw = buf.indexOf('stream', at, 'latin1');
    if (kw < 0) return false;
    at = kw + 6;
    // `endstream` is the end of a stream, not the start of one.
    if (buf.subarray(kw - 3, kw).toString('latin1') === 'end') continue;
    const head = buf.subarray(Math.max(0, kw - DICT_REACH), kw).toString('latin1');
    const dict = head.slice(head.lastIndexOf(' obj') + 1);
    if (!/>>\s*$/.test(dict) || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    // The data starts after the keyword's end of line (CR LF or LF) and runs to `endstream`.
    let start = at;
    if (buf[start] === 0x0d) start++;
    if (buf[start] === 0x0a) start++;
    const end = buf.indexOf('endstream', start, 'latin1');
    if (end < 0) return false;
    at = end + 9;
    let data: Buffer = buf.subarray(start, end);
    for (const name of filters(dict)) {
      const undo = UNDO[name];
      if (undo === undefined) break;
      let out: Buffer | null;
      try {
        out = undo(data, left);
      } catch {
        break;
      }
      if (out === null) return true;
      // Each stage is a buffer of its own in pdf.js.
      left -= out.length;
      data = out;
    }
  }
}
