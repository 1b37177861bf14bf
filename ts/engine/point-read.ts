import type { BindingSnapshot, BindingStore } from '../native/index.js';

// Values up to this size are read into one reused scratch buffer and copied out with
// `Buffer.from`, which takes small buffers from Node's pool; a fresh native buffer per read costs
// a malloc and a GC-tracked backing store. Larger values are read with `get` directly.
const SCRATCH_BYTES = 16 * 1024;
const scratch = Buffer.allocUnsafeSlow(SCRATCH_BYTES);

// Tree names cross as UTF-8 bytes kept here, one buffer per name: a JavaScript string would be
// converted and allocated on every read. Names are few (a store has a handful of trees), but the
// map is bounded all the same.
const MAX_CACHED_NAMES = 1024;
const treeNames = new Map<string, Buffer>();

function treeBytes(tree: string): Buffer {
  let bytes = treeNames.get(tree);
  if (bytes === undefined) {
    bytes = Buffer.from(tree, 'utf8');
    if (treeNames.size >= MAX_CACHED_NAMES) treeNames.clear();
    treeNames.set(tree, bytes);
  }
  return bytes;
}

/** The value of `key` in `tree` (at the reader's commit), or null. */
export function pointRead(reader: BindingStore | BindingSnapshot, tree: string, key: Uint8Array): Buffer | null {
  const n = reader.getInto(treeBytes(tree), key, scratch);
  if (n < 0) return null;
  if (n <= SCRATCH_BYTES) return Buffer.from(scratch.subarray(0, n));
  return reader.get(tree, key);
}
