import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

import { StoreError } from '../engine/errors.js';
import type { BackupReport, CompactReport, Store } from '../engine/store.js';
import { isInside } from '../server/backup-file.js';
import { clearDeadStaging } from '../server/leftovers.js';
import { findRunningNode } from '../server/node-file.js';
import { storeLockHolder } from '../server/store-lock.js';
import { adminCall } from './admin-client.js';
import { backupFromNode } from './backup-fetch.js';
import { checkDir, renderReport, runCheck } from './check.js';
import { DATA_FILE, LOG_FILE, needStore, notADirectory } from './data-dir.js';
import { CliFailure, EXIT_FAILED, EXIT_UNUSABLE, missing, refused } from './failure.js';
import { someOf } from './foreign-dir.js';
import { undoOnInterrupt } from './interrupt.js';
import { stagingIn } from './restore-staging.js';
import { matchOwner, openStore } from './store-owner.js';
import { needWritable } from './writable.js';

/** Arguments of `cairn database check|backup|restore|compact`. */
export interface DatabaseArgs {
  dataDir: string;
  json: boolean;
  purge: boolean;
  /** backup: where to write; restore: where to read from. */
  path?: string | undefined;
}

/** A refusal the user fixes (a target that is taken, a node in the way), said as is. */

function out(json: boolean, value: object, text: string) {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/**
 * `cairn database check|backup DEST|restore SRC|compact [--purge]` (DESIGN.md §4). While a node
 * holds the store, backup and compact go through its admin API (`CAIRN_ADMIN_TOKEN`), so the
 * store is never opened twice; restore refuses, since it replaces the store the node serves.
 * Exit 0 done, 1 refused or failed (check: problems found), 2 bad usage. A backup holds one file,
 * the store's `DATA_FILE` (it is a store with an empty log); restore also takes a copy of a data
 * dir, log and all.
 */
export async function runDatabase(sub: string, a: DatabaseArgs, env = process.env): Promise<number> {
  // Anything refused or failed once the command was understood is 1 (`run`'s default for what
  // it catches); 2 is kept for bad usage.
  if (sub === 'check' && a.path === undefined) {
    const outcome = await runCheck(a.dataDir, a.json);
    process.stdout.write(outcome.stdout);
    return outcome.exitCode;
  }
  if (sub === 'backup' && a.path !== undefined) return backup(a, resolve(a.path), env);
  if (sub === 'compact' && a.path === undefined) return compact(a, env);
  if (sub === 'restore' && a.path !== undefined) return restore(a, resolve(a.path));
  if (sub === 'backup') throw missing('DEST', 'the directory to write the backup into (cairn database backup DEST)');
  if (sub === 'restore') {
    throw missing('SRC', 'the backup (or copy of a data dir) to restore (cairn database restore SRC)');
  }
  throw new CliFailure(
    'VALIDATION_ERROR',
    'give check, backup DEST, restore SRC or compact [--purge] (see cairn --help)',
    EXIT_UNUSABLE,
  );
}

/** Runs `fn` on the store directly (no node holds it). */
async function withStore<T>(dataDir: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const store = await openStore(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * A backup is written by this process, as the user running the CLI, wherever it runs: through a
 * node, the node sends the copy and this writes it (`backupFromNode`), so a node in a service's
 * sandbox cannot put it somewhere the operator does not see. A DEST inside the data dir is
 * refused: `compact --purge` would leave forgotten data in it.
 */
async function backup(a: DatabaseArgs, dest: string, env: NodeJS.ProcessEnv): Promise<number> {
  needStore(a.dataDir);
  const notDir = notADirectory(dest);
  if (notDir !== null) throw refused(`${dest} ${notDir}`, 'DEST');
  if (existsSync(join(dest, DATA_FILE))) throw refused(`${dest} already holds a store`, 'DEST');
  if (isInside(dest, a.dataDir)) {
    throw refused(
      `${dest} is inside the data dir ${a.dataDir}: a backup there keeps what \`compact --purge\` removes; choose a DEST outside it`,
      'DEST',
    );
  }
  needWritable(dest, 'DEST', 'backup');
  const node = findRunningNode(a.dataDir);
  const report: BackupReport & { dest: string } =
    node !== null
      ? await backupFromNode(node, env.CAIRN_ADMIN_TOKEN, dest)
      : { dest, ...(await offlineBackup(a.dataDir, dest)) };
  out(a.json, report, `backed up ${a.dataDir} at transaction ${report.txn} into ${dest} (${report.pages} pages)`);
  return 0;
}

/** Removes `dir` when it is empty: a directory this run made, unless something else was put in it meanwhile. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Gone already, or it holds what is not ours to remove.
  }
}

/**
 * A backup with no node: the engine writes DEST itself, as `data.cairn.backup` renamed into place
 * once whole. A run that fails or is interrupted (Ctrl-C, SIGTERM) leaves nothing behind, as one
 * through a node does (`backupFromNode`): the engine removes its temporary file on failure, this
 * removes it on a signal, and DEST goes when this run made it.
 */
async function offlineBackup(dataDir: string, dest: string): Promise<BackupReport> {
  const made = !existsSync(dest);
  const undo = () => {
    rmSync(join(dest, `${DATA_FILE}.backup`), { force: true });
    if (made) removeIfEmpty(dest);
  };
  try {
    return await undoOnInterrupt(undo, () => withStore(dataDir, (s) => s.backup(dest)));
  } catch (err) {
    if (made) removeIfEmpty(dest);
    // The engine says "writing the new data file: No space left on device", which reads as the
    // store's own disk: said naming DEST, as a backup through a node says it.
    if (err instanceof StoreError && err.code === 'STORE_IO') {
      const message = `backing up into ${dest}: ${err.message}`;
      throw new CliFailure('INTERNAL', message, undefined, [
        { field: 'DEST', message: err.message },
        { store: err.code },
      ]);
    }
    throw err;
  }
}

async function compact(a: DatabaseArgs, env: NodeJS.ProcessEnv): Promise<number> {
  needStore(a.dataDir);
  const node = findRunningNode(a.dataDir);
  // Offline, the new data file is made beside the old one: a data dir this user may not write
  // failed as INTERNAL "creating the new data file: Permission denied", though other commands,
  // which write only the store's existing files, open it.
  if (node === null) {
    needWritable(
      a.dataDir,
      '--data-dir',
      'compaction',
      'the user that owns it (the installed service: sudo -u cairn …)',
    );
  }
  const report: CompactReport & { purge: boolean } =
    node !== null
      ? ((await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/admin/database/compact', {
          purge: a.purge,
        })) as unknown as CompactReport & { purge: boolean })
      : { purge: a.purge, ...(await offlineCompact(a.dataDir, a.purge)) };
  const zeroed = a.purge ? `, ${report.bytesZeroed} bytes of freed space and log zeroed` : '';
  out(
    a.json,
    report,
    `compacted ${a.dataDir}: ${report.pagesBefore} pages before, ${report.pagesAfter} after${zeroed}`,
  );
  return 0;
}

/**
 * A compaction with no node: the engine builds the new data file as `data.cairn.tmp` and renames
 * it over `data.cairn` once whole. Interrupted (Ctrl-C, SIGTERM) before that, the store is as it
 * was but the half-built copy, as large as the store, stayed until the next open; this removes it
 * on the signal. After the rename there is no such file and nothing to remove.
 */
function offlineCompact(dataDir: string, purge: boolean): Promise<CompactReport> {
  const undo = () => rmSync(join(dataDir, `${DATA_FILE}.tmp`), { force: true });
  return undoOnInterrupt(undo, () => withStore(dataDir, (s) => s.compact({ purge })));
}

/**
 * Refuses a source a running process holds: its files change under the copy (a page image and a
 * log from different moments), so the only consistent copy of it is a backup made through it.
 */
function refuseHeldSource(src: string): void {
  const node = findRunningNode(src);
  const pid = storeLockHolder(src) ?? node?.pid;
  if (pid === undefined || pid === null) return;
  const holder = node !== null ? `the node at ${node.url} (pid ${pid})` : `another process (pid ${pid})`;
  throw new CliFailure(
    'UNAVAILABLE',
    `${src} is held by ${holder}, so its files are not a consistent copy: make a backup through it with \`cairn database backup DEST --data-dir ${src}\` and restore that`,
    EXIT_FAILED,
    [{ field: 'SRC', message: `held by pid ${pid}` }],
  );
}

/**
 * Restores the store in `src` (a backup, or a copy of a data dir) into an empty data dir. The
 * source is copied first (its data file and log) and that copy is opened, so recovery replays its
 * log, writes acknowledged after its last checkpoint included, while the user's source stays as
 * it was. The copy is then written out as `backup` writes one (a dense data file, an empty log)
 * and checked (a damaged source never becomes the store), and its data file is moved into place.
 * The work is staged inside the target itself (`stagingIn`), which its owner can write even where
 * its parent is not theirs (a service's `/var/lib/cairn`); run as root, the restored files get the
 * target's owner (`matchOwner`), so the service's user can still open them. Ctrl-C or SIGTERM
 * removes what the run made; the staging dirs are named for this process, so a later restore
 * removes those a run killed outright left, and names those of one still running.
 */
async function restore(a: DatabaseArgs, src: string): Promise<number> {
  const target = resolve(a.dataDir);
  if (!existsSync(join(src, DATA_FILE))) {
    // `cairn import` names a backup given to it; a package given here is named back.
    const isPackage = existsSync(join(src, 'manifest.json')) || existsSync(join(src, 'records.jsonl'));
    const then = isPackage
      ? `: it is a Memory Package (\`cairn export\` wrote it), which \`cairn import ${src}\` takes into a store`
      : '';
    throw new CliFailure('NOT_FOUND', `no backup at ${src} (no ${DATA_FILE} there)${then}`);
  }
  refuseHeldSource(src);
  if (findRunningNode(target) !== null) {
    throw new CliFailure(
      'UNAVAILABLE',
      `a node is running on ${target}; stop it first (cairn stop --data-dir ${target})`,
    );
  }
  if (existsSync(join(target, DATA_FILE))) {
    throw refused(
      `${target} already holds a store; restore only into an empty data dir (move it aside first)`,
      '--data-dir',
    );
  }
  const staged = clearDeadStaging(target);
  const held = existsSync(target) ? readdirSync(target) : [];
  if (held.length > 0) {
    // What is there, so a mistyped target shows (found by QA: "is not empty" alone did not say).
    const named =
      staged.length === 0
        ? ` (${someOf(held)}); restore only into an empty data dir`
        : `; restore only into an empty data dir: it holds the staging dirs of another restore (${staged.join(', ')}); wait for it to end, or, if none runs, remove them`;
    throw refused(`${target} is not empty${named}`, '--data-dir');
  }
  const { staging, made } = stagingIn(target);
  const source = join(target, `${basename(staging)}-source`);
  let restored = false;
  const undo = () => {
    rmSync(source, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
    if (made && !restored) rmSync(target, { recursive: true, force: true });
  };
  try {
    return await undoOnInterrupt(undo, async () => {
      mkdirSync(staging, { mode: 0o700 });
      mkdirSync(source, { mode: 0o700 });
      for (const file of [DATA_FILE, LOG_FILE]) {
        if (existsSync(join(src, file))) await copyFile(join(src, file), join(source, file));
      }
      await withStore(source, (s) => s.backup(staging));
      const report = await checkDir(staging);
      if (!report.ok) throw refused(`the backup does not check clean:\n${renderReport(src, report)}`, 'SRC');
      // One rename: the target holds no store, or the whole one (its log is made when it opens).
      renameSync(join(staging, DATA_FILE), join(target, DATA_FILE));
      restored = true;
      matchOwner(target);
      out(a.json, { dataDir: target, txn: report.txn }, `restored ${src} into ${target} at transaction ${report.txn}`);
      return 0;
    });
  } finally {
    undo();
  }
}
