import { access, open, stat, statfs, unlink } from 'node:fs/promises';
import { join } from 'node:path';

import { StoreError } from './errors.js';
import { DATA_FILE, LOG_FILE } from './store-files.js';

/**
 * Whether the store takes writes. The engine stops a store for good at the first write it could
 * not make durable (a full disk, an I/O error: `STORE_FAILED`), since after a failed write or
 * sync it can no longer tell what reached the disk; reopening recovers exactly the acknowledged
 * writes from the log. Reads of the stopped store still work.
 */
export type WritesHealth =
  | { writes: 'ok' }
  | {
      writes: 'stopped';
      /** The engine's account of the failure, e.g. "growing the log: No space left on device (os error 28)". */
      reason: string;
      /** When the first write failed (ISO 8601). */
      since: string;
      /** Reopen attempts so far; each waits until the disk takes a probe file first. */
      attempts: number;
    };

/** What a reopening store reports to the node's log. */
export type ReopenEvent =
  | { event: 'stopped'; reason: string }
  | { event: 'probe_failed'; reason: string; attempts: number }
  | { event: 'reopen_failed'; reason: string; attempts: number }
  | { event: 'reopened'; attempts: number; stoppedForMs: number };

/** The first and the longest wait between two reopen attempts. */
const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 30_000;
/** Room a reopen needs beyond the log's size: recovery rewrites the log's pages into the data file. */
const PROBE_MARGIN_BYTES = 16 << 20;
const PROBE_FILE = '.space-probe';
const CHUNK = Buffer.alloc(1 << 20);

/** The failure inside the engine's STORE_FAILED message (it ends "…; reopen it to recover"). */
function failureReason(message: string): string {
  const inner = /after an I\/O failure \((.*?)\); reopen it to recover/s.exec(message)?.[1];
  return inner ?? message;
}

/**
 * Writes and syncs a file as large as a reopen needs (the log plus a margin) in `dir`, then
 * removes it. Reopening on a disk that cannot take it would fail in recovery and leave the store
 * unreadable too; probing first keeps the stopped store serving reads until the disk has room.
 * The file is synced because a filesystem with delayed allocation reports a full disk there, not
 * at the write.
 */
async function probe(dir: string): Promise<void> {
  // A data dir emptied or removed under the node would reopen as a new, empty store.
  await access(join(dir, DATA_FILE)).catch(() => {
    throw new Error(`${DATA_FILE} is no longer in ${dir}: restore it (the node will not make a new store there)`);
  });
  const logBytes = await stat(join(dir, LOG_FILE)).then(
    (s) => s.size,
    () => 0,
  );
  const need = logBytes + PROBE_MARGIN_BYTES;
  const fs = await statfs(dir);
  if (fs.bavail * fs.bsize < need) {
    throw new Error(`${Math.floor((fs.bavail * fs.bsize) / 2 ** 20)} MiB free, a reopen needs ${need >> 20} MiB`);
  }
  const path = join(dir, PROBE_FILE);
  const file = await open(path, 'w', 0o600);
  try {
    for (let written = 0; written < need; written += CHUNK.length) await file.write(CHUNK);
    await file.datasync();
  } finally {
    await file.close();
    await unlink(path).catch(() => {});
  }
}

/**
 * Keeps a store in service across a write failure: once the engine stops the store, reads go on
 * against it while a timer probes the disk (1 s, doubling to 30 s), and when the probe passes the
 * store is closed and opened again, which replays the log. Calls that arrive during the swap wait
 * for it; a reopen that fails leaves the store refusing every call with the failure until the
 * next attempt succeeds.
 */
export class Reopener {
  #health: WritesHealth = { writes: 'ok' };
  #timer: NodeJS.Timeout | undefined;
  #wait = FIRST_WAIT_MS;
  #swap: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly dir: string,
    /** Closes the stopped store and opens it again (recovery replays its log). */
    private readonly replace: () => Promise<void>,
    /** Closes the store's handle, so nothing more is written through it. */
    private readonly release: () => Promise<void>,
    private readonly report: (e: ReopenEvent) => void,
  ) {}

  /**
   * The store's files went from under it (`FilesWatch`): it stops as after a failed write, and its
   * handle is closed at once, since what is written through it reaches files no open will read.
   * It reopens once a `data.cairn` is back (put there by hand, or restored).
   */
  lost(why: string): void {
    if (this.#closed || this.#health.writes === 'stopped') return;
    this.#stop(why);
    void this.release();
  }

  health(): WritesHealth {
    return this.#health;
  }

  /** Resolves (never rejects) once a swap in progress, if any, is done. */
  settled(): Promise<void> | undefined {
    return this.#swap?.then(
      () => {},
      () => {},
    );
  }

  /**
   * Looks at an error a store call threw: a STORE_FAILED starts the reopen cycle; while the store
   * is stopped, a STORE_CLOSED (the old store closed by a swap) says the stop's reason instead.
   */
  seen(err: unknown): unknown {
    if (!(err instanceof StoreError) || this.#closed) return err;
    if (err.code === 'STORE_FAILED' && this.#health.writes === 'ok') this.#stop(failureReason(err.message));
    if (err.code === 'STORE_CLOSED' && this.#health.writes === 'stopped') {
      return new StoreError('STORE_FAILED', `the store is stopped: ${this.#health.reason}`);
    }
    return err;
  }

  #stop(reason: string): void {
    this.#health = { writes: 'stopped', reason, since: new Date().toISOString(), attempts: 0 };
    this.report({ event: 'stopped', reason });
    this.#schedule();
  }

  /** Stops the cycle (the store is closing); a swap in progress finishes first. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.settled();
  }

  #schedule(): void {
    this.#timer = setTimeout(() => void this.#attempt(), this.#wait);
    this.#timer.unref();
    this.#wait = Math.min(this.#wait * 2, LONGEST_WAIT_MS);
  }

  async #attempt(): Promise<void> {
    const h = this.#health;
    if (h.writes !== 'stopped' || this.#closed) return;
    h.attempts += 1;
    try {
      await probe(this.dir);
    } catch (err) {
      this.report({ event: 'probe_failed', reason: (err as Error).message, attempts: h.attempts });
      return this.#schedule();
    }
    if (this.#closed) return;
    // Only the swap holds calls back; reads go on against the stopped store during the probe.
    this.#swap = this.replace();
    try {
      await this.#swap;
    } catch (err) {
      this.report({ event: 'reopen_failed', reason: (err as Error).message, attempts: h.attempts });
      return this.#schedule();
    } finally {
      this.#swap = undefined;
    }
    this.report({ event: 'reopened', attempts: h.attempts, stoppedForMs: Date.now() - Date.parse(h.since) });
    this.#health = { writes: 'ok' };
    this.#wait = FIRST_WAIT_MS;
  }
}
