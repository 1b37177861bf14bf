import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, fstatSync, openSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

import type { BackupReport, Store } from '../engine/store.js';

/** The one file of a backup: the store's data file (a store with an empty log). */
const DATA_FILE = 'data.cairn';

/** What staging directories in a data dir are named: `.backup-` and random hex. */
const STAGING = /^\.backup-[0-9a-f]{12}$/;

/** A backup's data file, open, its name already gone from the data dir. */
export interface StagedBackup {
  report: BackupReport;
  fd: number;
  bytes: number;
  sha256: string;
}

/**
 * Makes a consistent backup of `store` and hands it over open: the node writes it into a staging
 * directory inside its own data dir (the one place a hardened service may write, its private
 * /tmp being invisible to the operator), opens the file, digests it, and removes the directory at
 * once. The copy lives on only as the open descriptor, so one the caller never takes leaves no
 * file behind (nor forgotten data that `compact --purge` would not reach). Close `fd` when done.
 */
export async function stagedBackup(store: Store): Promise<StagedBackup> {
  const staging = join(store.dir, `.backup-${randomBytes(6).toString('hex')}`);
  let fd: number | null = null;
  try {
    const report = await store.backup(staging);
    fd = openSync(join(staging, DATA_FILE), 'r');
    rmSync(staging, { recursive: true, force: true });
    const hash = createHash('sha256');
    for await (const chunk of createReadStream('', { fd, start: 0, autoClose: false })) hash.update(chunk);
    return { report, fd, bytes: fstatSync(fd).size, sha256: hash.digest('hex') };
  } catch (err) {
    if (fd !== null) closeSync(fd);
    throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Removes staging directories a node stopped mid-backup left in `dataDir` (see `stagedBackup`). */
export function removeStagedBackups(dataDir: string): void {
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    return;
  }
  for (const name of names) if (STAGING.test(name)) rmSync(join(dataDir, name), { recursive: true, force: true });
}

/**
 * Whether `path` is `dir` or lies inside it, symlinks resolved (of `path`, as far as it exists):
 * a backup there stays beside the store, forgotten data and all, after `compact --purge`.
 */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(realish(dir), realish(path));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** `path` with its longest existing prefix resolved through symlinks. */
function realish(path: string): string {
  const abs = resolve(path);
  const parent = dirname(abs);
  try {
    return realpathSync(abs);
  } catch {
    return parent === abs ? abs : join(realish(parent), basename(abs));
  }
}
