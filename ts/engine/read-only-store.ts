import { resolve } from 'node:path';

import type { BindingReadOnlyStore } from '../native/index.js';
import { loadNative } from '../native/loader.js';
import { rethrow } from './errors.js';
import type { CheckReport } from './store.js';

/**
 * A store opened to be read and checked without changing anything on disk: no file is created
 * (no `LOCK`, no log) or written, and log records past the last checkpoint are replayed in memory
 * only, so a backup, a copy, a read-only mount or another user's data dir is checked as it is.
 */
export class ReadOnlyStore {
  constructor(
    readonly inner: BindingReadOnlyStore,
    readonly dir: string,
  ) {}

  /**
   * Opens the store in `dir` read-only. Fails with `STORE_LOCKED` naming the holder while another
   * process has it open (and, while open, keeps one from opening it), `STORE_IO` when `dir` holds
   * no store (none is made).
   */
  static async open(dir: string): Promise<ReadOnlyStore> {
    const inner = await loadNative().openStoreReadOnly(dir).catch(rethrow);
    return new ReadOnlyStore(inner, resolve(dir));
  }

  /** What `Store.check` reports, of the state the log brings the data file to. */
  check(): Promise<CheckReport> {
    return this.inner.check().catch(rethrow);
  }

  /** Releases the store; idempotent. */
  close(): Promise<void> {
    return this.inner.close().catch(rethrow);
  }
}
