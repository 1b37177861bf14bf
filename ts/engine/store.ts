import { resolve } from 'node:path';

import type {
  BindingBackupReport,
  BindingCheckReport,
  BindingCompactReport,
  BindingStats,
  BindingStore,
} from '../native/index.js';
import { loadNative } from '../native/loader.js';
import type { WriteBatch } from './batch.js';
import { type Bytes, toBytes } from './bytes.js';
import { coded, rethrow, StoreError } from './errors.js';
import { type Caller, callKnowledge, type KnowledgeVerb, loadKnowledge } from './knowledge.js';
import { callNotes, type NotesVerb } from './notes.js';
import { pointRead } from './point-read.js';
import { type Entry, type RangeOptions, scan } from './scan.js';
import { Snapshot } from './snapshot.js';
import { FilesWatch } from './store-files-watch.js';
import { type ReopenEvent, Reopener, type WritesHealth } from './store-reopen.js';

/** Sizes and windows for an open store; anything left out takes the engine's default. */
export interface StoreOptions {
  /** Bytes of page cache (default 64 MiB). */
  cacheBytes?: number;
  /** WAL size in bytes that triggers a checkpoint (default 64 MiB). */
  checkpointBytes?: number;
  /** Hours a notes write's `idempotencyKey` is remembered, a whole number 1–8760 (default 24). */
  idempotencyHours?: number;
  /** Bytes of entity-name indexes the process keeps between calls (default 512 MiB). */
  nameCacheBytes?: number;
}

export type CheckReport = BindingCheckReport;
export type BackupReport = BindingBackupReport;
export type CompactReport = BindingCompactReport;
export type StoreStats = BindingStats;

/** A page the engine found damaged (`STORE_CORRUPT`): the first one's account, and when. */
export interface Damage {
  reason: string;
  since: string;
}

/** Whether the store takes writes (`WritesHealth`), and whether a read met a damaged page. */
export type StoreHealth = WritesHealth & { damaged?: Damage };

/**
 * One open store directory, owned by this process until `close()`. Point reads are synchronous;
 * writes resolve once durable and many in flight share one fsync (group commit).
 */
export class Store {
  #inner: BindingStore;
  #reopener: Reopener | undefined;
  #watch: FilesWatch | undefined;
  #damage: Damage | undefined;

  /** `inner`, opened on the directory `dir` (absolute) with `opts`. */
  constructor(
    inner: BindingStore,
    readonly dir: string,
    private readonly opts: StoreOptions = {},
  ) {
    this.#inner = inner;
  }

  /**
   * Opens the store in `dir`, creating it when missing, taking its lock and recovering from any
   * crash. A directory held by another process fails with `STORE_LOCKED` naming that process.
   */
  static async open(dir: string, opts: StoreOptions = {}): Promise<Store> {
    const inner = await loadNative().openStore(dir, opts).catch(rethrow);
    return new Store(inner, resolve(dir), opts);
  }

  /** The open engine handle (another after a reopen: see `reopenAfterFailure`). */
  get inner(): BindingStore {
    return this.#inner;
  }

  /**
   * From now on a write failure that stops the store (a full disk: `STORE_FAILED`) is followed by
   * reopening it once the disk takes writes again (`Reopener`); `report` hears each step. A node
   * calls this; a CLI command, which ends at the failure, does not.
   */
  reopenAfterFailure(report: (e: ReopenEvent) => void): void {
    if (this.#reopener !== undefined) return;
    const reopener = new Reopener(
      this.dir,
      () => this.#watch?.around(() => this.#replace()) ?? this.#replace(),
      () => this.#inner.close().catch(() => {}),
      report,
    );
    this.#reopener = reopener;
    this.#watch = new FilesWatch(this.dir, (why) => reopener.lost(why));
  }

  /**
   * Whether the store takes writes, and if not, why and since when; and whether a call met a
   * damaged page since it was opened (the damage stays: a page fails its checksum until the store
   * is restored).
   */
  health(): StoreHealth {
    const writes = this.#reopener?.health() ?? { writes: 'ok' };
    return this.#damage === undefined ? writes : { ...writes, damaged: this.#damage };
  }

  /** What a failed engine call throws, having noted a damaged page or a stopped store. */
  #failed(err: unknown): unknown {
    if (err instanceof StoreError && err.code === 'STORE_CORRUPT') {
      this.#damage ??= { reason: err.message, since: new Date().toISOString() };
    }
    return this.#reopener?.seen(err) ?? err;
  }

  async #replace(): Promise<void> {
    await this.#inner.close().catch(() => {});
    this.#inner = await loadNative().openStore(this.dir, this.opts).catch(rethrow);
  }

  /** Runs an engine call on the current handle, after a reopen in progress; failures go through `#failed`. */
  async #run<T>(call: (inner: BindingStore) => Promise<T>): Promise<T> {
    const swap = this.#reopener?.settled();
    if (swap !== undefined) await swap;
    try {
      return await call(this.#inner);
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** `#run` for a synchronous engine call (a point read, a snapshot, the counters). */
  #now<T>(call: (inner: BindingStore) => T): T {
    try {
      return coded(() => call(this.#inner));
    } catch (err) {
      throw this.#failed(err);
    }
  }

  /** The value of `key` in `tree` at the latest commit, or null. */
  get(tree: string, key: Bytes): Buffer | null {
    return this.#now((inner) => pointRead(inner, tree, toBytes(key)));
  }

  /** Commits `batch` atomically; resolves with its transaction id (decimal string) once durable. */
  write(batch: WriteBatch): Promise<string> {
    return this.#run((inner) => inner.write(batch.encode()).catch(rethrow));
  }

  /** Entries of `tree` at the latest commit; see `RangeOptions`. */
  range(tree: string, opts?: RangeOptions): Promise<Entry[]> {
    return this.#run((inner) => scan(inner, tree, opts));
  }

  /** A consistent read view at the latest commit. */
  snapshot(): Snapshot {
    return this.#now((inner) => new Snapshot(inner.snapshot()));
  }

  /** Checks every page and tree; `ok` is false and `problems` say what is wrong when damaged. */
  check(): Promise<CheckReport> {
    return this.#run((inner) => inner.check().catch(rethrow));
  }

  /** Writes a consistent copy of the store into `dir` while writes go on. */
  backup(dir: string): Promise<BackupReport> {
    return this.#run((inner) => inner.backup(dir).catch(rethrow));
  }

  /** Rewrites the data file without free pages; `purge` also zeroes the bytes of freed pages. */
  compact(opts: { purge?: boolean } = {}): Promise<CompactReport> {
    // Compaction renames a new data file into place: the watch takes it as the store's.
    const run = () => this.#run((inner) => inner.compact(opts).catch(rethrow));
    return this.#watch?.around(run) ?? run();
  }

  /** Moves the write-ahead log into the data file. */
  checkpoint(): Promise<void> {
    return this.#run((inner) => inner.checkpoint().catch(rethrow));
  }

  /**
   * Runs a knowledge verb for `caller` (see `callKnowledge`); resolves with the parsed JSON reply,
   * which carries `error` when the engine refused in the product's terms.
   */
  knowledge(verb: KnowledgeVerb, caller: Caller, body: unknown): Promise<Record<string, unknown>> {
    return this.#run((inner) => callKnowledge(inner, verb, caller, body));
  }

  /**
   * Bulk-loads a whole export (JSON lines, one record a line) into the empty scope of `caller` in
   * one transaction (see `loadKnowledge`): what an operator fills a scope from a file with. The
   * engine reads `lines` in place: leave them unchanged until the promise settles. With `whole`,
   * any line that fails its checks refuses the load and nothing is stored.
   */
  load(caller: Caller, lines: Uint8Array, whole = false): Promise<Record<string, unknown>> {
    return this.#run((inner) => loadKnowledge(inner, caller, lines, whole));
  }

  /**
   * Runs a notes or handoff verb for `caller` (see `callNotes`); resolves with the parsed JSON
   * reply, which carries `error` when the engine refused in the product's terms.
   */
  notes(verb: NotesVerb, caller: Caller, body: unknown): Promise<Record<string, unknown>> {
    return this.#run((inner) => callNotes(inner, verb, caller, body));
  }

  /** Counters of the open store. */
  stats(): StoreStats {
    return this.#now((inner) => inner.stats());
  }

  /** Finishes pending writes and releases the directory; idempotent. */
  async close(): Promise<void> {
    this.#watch?.stop();
    await this.#reopener?.close();
    return this.#inner.close().catch(rethrow);
  }
}
