import { type Bytes, toBytes } from './bytes.js';
import { StoreError } from './errors.js';

const OP_PUT = 1;
const OP_DELETE = 2;

interface Op {
  code: typeof OP_PUT | typeof OP_DELETE;
  tree: Buffer;
  key: Uint8Array;
  value?: Uint8Array;
}

/**
 * Puts and deletes applied atomically by one `Store.write`. Encoded exactly as the engine's
 * `Batch::decode` reads it, repeated until the end (integers little-endian):
 * `op u8 (1 put, 2 delete) | tree_len u16 | tree | key_len u32 | key | [value_len u32 | value]`.
 * Limits (key and value sizes, tree names) are checked by the engine, the one place they live.
 */
export class WriteBatch {
  readonly #ops: Op[] = [];
  #bytes = 0;

  /** Sets `key` in `tree` to `value`. */
  put(tree: string, key: Bytes, value: Bytes): this {
    const t = treeName(tree);
    const k = toBytes(key);
    const v = toBytes(value);
    this.#ops.push({ code: OP_PUT, tree: t, key: k, value: v });
    this.#bytes += 1 + 2 + t.length + 4 + k.length + 4 + v.length;
    return this;
  }

  /** Removes `key` from `tree` (a missing key is not an error). */
  delete(tree: string, key: Bytes): this {
    const t = treeName(tree);
    const k = toBytes(key);
    this.#ops.push({ code: OP_DELETE, tree: t, key: k });
    this.#bytes += 1 + 2 + t.length + 4 + k.length;
    return this;
  }

  /** How many operations the batch holds. */
  get length(): number {
    return this.#ops.length;
  }

  /** The batch in the engine's byte layout. */
  encode(): Buffer {
    const out = Buffer.allocUnsafe(this.#bytes);
    let at = 0;
    for (const op of this.#ops) {
      at = out.writeUInt8(op.code, at);
      at = out.writeUInt16LE(op.tree.length, at);
      at += op.tree.copy(out, at);
      at = out.writeUInt32LE(op.key.length, at);
      out.set(op.key, at);
      at += op.key.length;
      if (op.value !== undefined) {
        at = out.writeUInt32LE(op.value.length, at);
        out.set(op.value, at);
        at += op.value.length;
      }
    }
    return out;
  }
}

function treeName(tree: string): Buffer {
  const bytes = Buffer.from(tree, 'utf8');
  // The u16 length field is the only limit the encoding itself imposes; the engine checks the rest.
  if (bytes.length > 0xffff) {
    throw new StoreError('INVALID_ARGUMENT', `tree name is ${bytes.length} bytes; it cannot be encoded`);
  }
  return bytes;
}
