import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import { type BackupReport, type CompactReport, Store } from '../engine/store.js';
import { findRunningNode } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { renderReport, runCheck } from './check.js';
import { DATA_FILE, needStore } from './data-dir.js';
import { CliFailure, EXIT_FAILED, EXIT_UNUSABLE } from './failure.js';

/** Arguments of `cairn database check|backup|restore|compact`. */
export interface DatabaseArgs {
  dataDir: string;
  json: boolean;
  purge: boolean;
  /** backup: where to write; restore: where to read from. */
  path?: string | undefined;
}

/** A refusal the user fixes (a target that is taken, a node in the way), said as is. */
const refused = (message: string, field: string) =>
  new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field, message }]);

function out(json: boolean, value: object, text: string) {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

/**
 * `cairn database check|backup DEST|restore SRC|compact [--purge]` (DESIGN.md §4). While a node
 * holds the store, backup and compact go through its admin API (`CAIRN_ADMIN_TOKEN`), so the
 * store is never opened twice; restore refuses, since it replaces the store the node serves.
 * Exit 0 done, 1 refused or failed (check: problems found), 2 bad usage. A backup holds one file,
 * the store's `DATA_FILE` (it is a store with an empty log).
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
  throw new CliFailure(
    'VALIDATION_ERROR',
    'give check, backup DEST, restore SRC or compact [--purge] (see cairn --help)',
    EXIT_UNUSABLE,
  );
}

/** Runs `fn` on the store directly (no node holds it). */
async function withStore<T>(dataDir: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const store = await Store.open(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function backup(a: DatabaseArgs, dest: string, env: NodeJS.ProcessEnv): Promise<number> {
  needStore(a.dataDir);
  if (existsSync(join(dest, DATA_FILE))) throw refused(`${dest} already holds a store`, 'DEST');
  const node = findRunningNode(a.dataDir);
  const report: BackupReport & { dest: string } =
    node !== null
      ? ((await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/admin/database/backup', {
          dest,
        })) as unknown as BackupReport & { dest: string })
      : { dest, ...(await withStore(a.dataDir, (s) => s.backup(dest))) };
  out(a.json, report, `backed up ${a.dataDir} at transaction ${report.txn} into ${dest} (${report.pages} pages)`);
  return 0;
}

async function compact(a: DatabaseArgs, env: NodeJS.ProcessEnv): Promise<number> {
  needStore(a.dataDir);
  const node = findRunningNode(a.dataDir);
  const report: CompactReport & { purge: boolean } =
    node !== null
      ? ((await adminCall(node, env.CAIRN_ADMIN_TOKEN, 'POST', '/v1/admin/database/compact', {
          purge: a.purge,
        })) as unknown as CompactReport & { purge: boolean })
      : { purge: a.purge, ...(await withStore(a.dataDir, (s) => s.compact({ purge: a.purge }))) };
  const zeroed = a.purge ? `, ${report.bytesZeroed} bytes of freed space and log zeroed` : '';
  out(
    a.json,
    report,
    `compacted ${a.dataDir}: ${report.pagesBefore} pages before, ${report.pagesAfter} after${zeroed}`,
  );
  return 0;
}

/**
 * Restores the backup in `src` into an empty data dir: copies it beside the target, opens and
 * checks the copy there (a damaged backup never becomes the store), then moves it into place.
 */
async function restore(a: DatabaseArgs, src: string): Promise<number> {
  const target = resolve(a.dataDir);
  if (!existsSync(join(src, DATA_FILE)))
    throw new CliFailure('NOT_FOUND', `no backup at ${src} (no ${DATA_FILE} there)`);
  if (findRunningNode(target) !== null)
    throw new CliFailure('UNAVAILABLE', `a node is running on ${target}; stop it first`);
  if (existsSync(join(target, DATA_FILE))) {
    throw refused(
      `${target} already holds a store; restore only into an empty data dir (move it aside first)`,
      '--data-dir',
    );
  }
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw refused(`${target} is not empty; restore only into an empty data dir`, '--data-dir');
  }
  mkdirSync(dirname(target), { recursive: true });
  const staging = join(dirname(target), `.${basename(target)}.restore-${randomBytes(4).toString('hex')}`);
  mkdirSync(staging, { mode: 0o700 });
  try {
    await copyFile(join(src, DATA_FILE), join(staging, DATA_FILE));
    const report = await withStore(staging, (s) => s.check());
    if (!report.ok) throw refused(`the backup does not check clean:\n${renderReport(src, report)}`, 'SRC');
    // An empty directory (checked above) gives way to the restored one.
    if (existsSync(target)) rmdirSync(target);
    renameSync(staging, target);
    chmodSync(target, 0o700);
    out(a.json, { dataDir: target, txn: report.txn }, `restored ${src} into ${target} at transaction ${report.txn}`);
    return 0;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
