import { constants, inflateSync } from 'node:zlib';

/** How far before a `stream` keyword its dictionary may start. */
const DICT_REACH = 4096;

/** How many FlateDecode filters a stream dictionary names, when it names no other filter; `null`
 * when it names another filter (or none): such a stream is not unpacked here. */
function flateChain(dict: string): number | null {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dict)?.[1];
  if (filter === undefined) return null;
  const names = filter.match(/\/[A-Za-z0-9]+/g) ?? [];
  return names.length > 0 && names.every((n) => n === '/FlateDecode') ? names.length : null;
}

/**
 * Whether the Flate-compressed streams of a PDF unpack to more than `budget` bytes between them.
 * pdf.js unpacks a stream into an ArrayBuffer, which a reader's heap limit does not count: a
 * 2 MB file whose one content stream unpacks to 2 GB took the reader's process past 4 GB of
 * memory (and 50 s) with the heap limit at 512 MB. So the streams pdf.js may unpack are
 * unpacked here first, each only until the budget is spent, and none kept. Images are left out:
 * pdf.js does not unpack them to read text, and a scan with a text layer is mostly image.
 * A stream that does not inflate is pdf.js's to judge; a stream under another filter is not
 * counted.
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
    const dictFrom = Math.max(0, kw - DICT_REACH);
    const head = buf.subarray(dictFrom, kw).toString('latin1');
    const dict = head.slice(head.lastIndexOf(' obj') + 1);
    if (!/>>\s*$/.test(dict)) continue;
    const chain = flateChain(dict);
    if (chain === null || /\/Subtype\s*\/Image\b/.test(dict)) continue;
    // The data starts after the keyword's end of line (CR LF or LF) and runs to `endstream`.
    let start = at;
    if (buf[start] === 0x0d) start++;
    if (buf[start] === 0x0a) start++;
    const end = buf.indexOf('endstream', start, 'latin1');
    if (end < 0) return false;
    at = end + 9;
    let data = buf.subarray(start, end);
    for (let i = 0; i < chain; i++) {
      try {
        // One byte past what is left tells a stream that spends the budget from one that fits it;
        // a sync flush reads a stream cut short (or with bytes after its end) as far as it goes.
        data = inflateSync(data, { maxOutputLength: left + 1, finishFlush: constants.Z_SYNC_FLUSH });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return true;
        break;
      }
      // Each stage is a buffer of its own in pdf.js.
      left -= data.length;
      if (left < 0) return true;
    }
  }
}
