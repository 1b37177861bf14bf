/** A key, value or prefix: bytes, or a string taken as its UTF-8 encoding. */
export type Bytes = Uint8Array | string;

/** The bytes of `value`, without copying when it already is bytes. */
export function toBytes(value: Bytes): Uint8Array {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}
