import { chmodSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { makeDirs } from './make-dirs.js';

/**
 * The files Cairn keeps in a data dir (engine files, the lock, the node's announcement and log).
 * Only these are tightened: a data dir may be a directory the operator also uses for other things.
 */
export const STORE_FILES = ['data.cairn', 'data.cairn.tmp', 'wal.cairn', 'LOCK', 'node.json', 'node.log', 'node.log.1'];

/** The files opening a store creates. */
const ENGINE_FILES = ['data.cairn', 'data.cairn.tmp', 'wal.cairn', 'LOCK'];

/**
 * Makes `dataDir` private before the store opens: creates it 0700 when missing, and sets Cairn's own
 * files in it to 0600 when an older version (or a permissive umask) left them readable by others.
 * A directory that already exists is not changed (the operator chose it); when it lets other users
 * in, `warning` says so and how to fix it. The engine creates new files 0600 itself. `made` are the
 * directories it created, outermost first, for `removeNewStore`.
 */
export function privateDataDir(dataDir: string): { warning: string | null; made: string[] } {
  const made = makeDirs(dataDir, 0o700);
  for (const name of STORE_FILES) {
    const path = join(dataDir, name);
    let mode: number;
    try {
      mode = statSync(path).mode;
    } catch {
      continue;
    }
    if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
  }
  const dirMode = statSync(dataDir).mode & 0o777;
  if ((dirMode & 0o077) === 0) return { warning: null, made };
  const warning =
    `the data dir ${dataDir} is mode ${dirMode.toString(8).padStart(4, '0')}: other users can list it ` +
    `(the files in it are private); run \`chmod 700 ${dataDir}\``;
  return { warning, made };
}

/**
 * Undoes a first start that failed (a port in use): removes the store files it created in
 * `dataDir`, then the directories in `made` (`removeMadeDirs`), so a refused start leaves the disk
 * as it found it. Called only for a store that was not there before this start, once it is closed.
 */
export function removeNewStore(dataDir: string, made: string[]): void {
  // The engine's files only: a node's log may be an earlier run's, in a directory the operator made.
  for (const name of ENGINE_FILES) rmSync(join(dataDir, name), { force: true });
  removeMadeDirs(made);
}

/** Removes the directories `privateDataDir` made, innermost first, each only when empty. */
export function removeMadeDirs(made: string[]): void {
  for (const dir of [...made].reverse()) {
    try {
      rmdirSync(dir);
    } catch {
      // Not empty (another process put something there meanwhile): it and those around it stay.
      return;
    }
  }
}
