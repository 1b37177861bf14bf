import type { BindingSnapshot, BindingStore } from '../native/index.js';
import { type Bytes, toBytes } from './bytes.js';
import { rethrow, StoreError } from './errors.js';

/** One key and its value. Both are views into the scan's single result buffer. */
export interface Entry {
  key: Buffer;
  value: Buffer;
}

/**
 * Which entries of a tree to read: keys in `[start, end)` (either side open when left out), or
 * keys starting with `prefix`; at most `limit` of them, in ascending key order.
 */
export interface RangeOptions {
  start?: Bytes;
  end?: Bytes;
  prefix?: Bytes;
  limit?: number;
}

/**
 * Splits a scan's result, repeated `[key_len u32 LE][key][value_len u32 LE][value]`, into
 * entries without copying.
 */
export function decodeEntries(buf: Buffer): Entry[] {
  const out: Entry[] = [];
  let at = 0;
  while (at < buf.length) {
    const klen = buf.readUInt32LE(at);
    const key = buf.subarray(at + 4, at + 4 + klen);
    at += 4 + klen;
    const vlen = buf.readUInt32LE(at);
    const value = buf.subarray(at + 4, at + 4 + vlen);
    at += 4 + vlen;
    out.push({ key, value });
  }
  return out;
}

/** Runs a range or prefix scan on a store or a snapshot and decodes its entries. */
export async function scan(
  reader: BindingStore | BindingSnapshot,
  tree: string,
  opts: RangeOptions = {},
): Promise<Entry[]> {
  const { start, end, prefix, limit } = opts;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0 || limit > 0xffffffff)) {
    throw new StoreError('INVALID_ARGUMENT', `limit must be a whole number from 0 to 2^32-1, got ${limit}`);
  }
  if (prefix !== undefined && (start !== undefined || end !== undefined)) {
    throw new StoreError('INVALID_ARGUMENT', 'give either a prefix or a start/end range, not both');
  }
  const buf =
    prefix !== undefined
      ? await reader.prefix(tree, toBytes(prefix), limit).catch(rethrow)
      : await reader
          .range(
            tree,
            start === undefined ? undefined : toBytes(start),
            end === undefined ? undefined : toBytes(end),
            limit,
          )
          .catch(rethrow);
  return decodeEntries(buf);
}
