import { constants, inflateSync } from 'node:zlib';

/** A stream filter undone with at most `max` bytes of output; `null` past that. Throws on data it
 * cannot decode. */
export type Undo = (data: Buffer, max: number) => Buffer | null;

/** FlateDecode; a sync flush reads a stream cut short (or with bytes after its end) as far as it
 * goes. */
const flate: Undo = (data, max) => {
  try {
    // One byte past the most tells a stream that goes past it from one that fits.
    const out = inflateSync(data, { maxOutputLength: max + 1, finishFlush: constants.Z_SYNC_FLUSH });
    return out.length > max ? null : out;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return null;
    throw err;
  }
};

/** ASCIIHexDecode: pairs of hex digits up to `>`, white space between. */
const hex: Undo = (data) => {
  const digits =
    data
      .toString('latin1')
      .split('>')[0]
      ?.replace(/[^0-9a-f]/gi, '') ?? '';
  return Buffer.from(digits.length % 2 === 0 ? digits : `${digits}0`, 'hex');
};

/** ASCII85Decode: groups of five characters `!`–`u` for four bytes, `z` for four zeros, up to `~>`. */
const ascii85: Undo = (data, max) => {
  const text = (data.toString('latin1').split('~>')[0] ?? '').replace(/\s+/g, '');
  const out: number[] = [];
  let group: number[] = [];
  const emit = (n: number) => {
    let v = group.concat(Array(5 - group.length).fill(84)).reduce((a, c) => a * 85 + c, 0);
    const bytes: number[] = [];
    for (let i = 0; i < 4; i++, v = Math.floor(v / 256)) bytes.unshift(v % 256);
    out.push(...bytes.slice(0, n));
    group = [];
  };
  for (const ch of text) {
    if (ch === 'z' && group.length === 0) out.push(0, 0, 0, 0);
    else {
      group.push(ch.charCodeAt(0) - 33);
      if (group.length === 5) emit(4);
    }
    if (out.length > max) return null;
  }
  if (group.length > 1) emit(group.length - 1);
  return Buffer.from(out);
};

/**
 * LZWDecode (PDF's default early change): codes of 9 to 12 bits, 256 clears the table, 257 ends.
 * A table entry is a string already in the output, kept as where it starts and how long it is: a
 * stream built to expand (each code one byte longer than the last) is stopped at `max`.
 */
const lzw: Undo = (data, max) => {
  let buf = Buffer.allocUnsafe(Math.min(max, data.length * 4 + 64));
  let size = 0;
  /** Appends `n` bytes of the output from `from`, then `extra`; false past `max`. */
  const put = (from: number, n: number, extra?: number): boolean => {
    const need = size + n + (extra === undefined ? 0 : 1);
    if (need > max) return false;
    if (need > buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(max, Math.max(need, buf.length * 2)));
      buf.copy(grown, 0, 0, size);
      buf = grown;
    }
    buf.copy(buf, size, from, from + n);
    size += n;
    if (extra !== undefined) buf[size++] = extra;
    return true;
  };
  const start: number[] = [];
  const len: number[] = [];
  let next = 258;
  let width = 9;
  /** Where the previous code's string sits in the output; -1 after a clear. */
  let prevStart = -1;
  let prevLen = 0;
  let acc = 0;
  let bits = 0;
  for (const byte of data) {
    acc = ((acc << 8) | byte) & 0xffffff;
    bits += 8;
    while (bits >= width) {
      const code = (acc >> (bits - width)) & ((1 << width) - 1);
      bits -= width;
      if (code === 256) {
        [next, width, prevStart] = [258, 9, -1];
        continue;
      }
      if (code === 257) return buf.subarray(0, size);
      const at = size;
      let ok: boolean;
      if (code < 256) ok = put(0, 0, code);
      else if (code < next) ok = put(start[code] ?? 0, len[code] ?? 0);
      // The entry being defined: the previous string and its own first byte.
      else if (code === next && prevStart >= 0) ok = put(prevStart, prevLen, buf[prevStart]);
      else throw new Error('an LZW code past the table');
      if (!ok) return null;
      // The new entry is the previous string and the first byte of this one, which follows it.
      if (prevStart >= 0 && next < 4096) {
        start[next] = prevStart;
        len[next] = prevLen + 1;
        next++;
        if (next + 1 >= 1 << width && width < 12) width++;
      }
      [prevStart, prevLen] = [at, size - at];
    }
  }
  return buf.subarray(0, size);
};

/** The filters undone here by their names (and the abbreviations of inline images). Others
 * (RunLengthDecode, which at most multiplies by 64, and the image codecs) end the chain. */
export const UNDO: Record<string, Undo> = {
  FlateDecode: flate,
  Fl: flate,
  ASCIIHexDecode: hex,
  AHx: hex,
  ASCII85Decode: ascii85,
  A85: ascii85,
  LZWDecode: lzw,
  LZW: lzw,
};
