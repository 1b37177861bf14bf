import type { BindingSnapshot } from '../native/index.js';
import { type Bytes, toBytes } from './bytes.js';
import { coded } from './errors.js';
import { pointRead } from './point-read.js';
import { type Entry, type RangeOptions, scan } from './scan.js';

/**
 * A consistent read view pinned at one commit: later writes are invisible to it, and it never
 * blocks them. Call `close()` when done so the pages it pins can be reused.
 */
export class Snapshot {
  constructor(readonly inner: BindingSnapshot) {}

  /** The transaction this view sees, as a decimal string. */
  get txn(): string {
    return coded(() => this.inner.txn);
  }

  /** The value of `key` in `tree` as of this view, or null. */
  get(tree: string, key: Bytes): Buffer | null {
    return coded(() => pointRead(this.inner, tree, toBytes(key)));
  }

  /** Entries of `tree` as of this view; see `RangeOptions`. */
  range(tree: string, opts?: RangeOptions): Promise<Entry[]> {
    return scan(this.inner, tree, opts);
  }

  /** Releases the view; idempotent. Later reads fail with `STORE_CLOSED`. */
  close(): void {
    this.inner.close();
  }
}
