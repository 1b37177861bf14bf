import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { makeDirs } from './make-dirs.js';

/**
 * The files Cairn keeps in a data dir (engine files, the lock, the node's announcement and log).
 * Only these are tightened: a data dir may be a directory the operator also uses for other things.
 */
export const STORE_FILES = ['data.cairn', 'data.cairn.tmp', 'wal.cairn', 'LOCK', 'node.json', 'node.log', 'node.log.1'];

/**
 * Makes `dataDir` private before the store opens: creates it 0700 when missing, and sets Cairn's own
 * files in it to 0600 when an older version (or a permissive umask) left them readable by others.
 * A directory that already exists is not changed (the operator chose it); when it lets other users
 * in, the returned warning says so and how to fix it. The engine creates new files 0600 itself.
 */
export function privateDataDir(dataDir: string): string | null {
  makeDirs(dataDir, 0o700);
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
  if ((dirMode & 0o077) === 0) return null;
  return (
    `the data dir ${dataDir} is mode ${dirMode.toString(8).padStart(4, '0')}: other users can list it ` +
    `(the files in it are private); run \`chmod 700 ${dataDir}\``
  );
}
