import { chownSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { Store } from '../engine/store.js';
import { removeLeftovers } from '../server/leftovers.js';
import { STORE_FILES } from '../server/private-dir.js';
import { refuseForeignDataDir } from './foreign-dir.js';

/** Who is running, and how files are given away (tests pass their own). */
export interface Runner {
  uid: number | undefined;
  chown: (path: string, uid: number, gid: number) => void;
}

const thisProcess: Runner = { uid: process.getuid?.(), chown: chownSync };

/**
 * Gives Cairn's files in `dataDir` the owner and group of `dataDir` itself when this process runs
 * as root: a command an operator runs as root on a service's data dir (a restore, an offline
 * compact, which rewrites `data.cairn`) would otherwise leave files the service's user cannot
 * open, and the node would not start. Run as anyone else, files are already that user's.
 */
export function matchOwner(dataDir: string, runner: Runner = thisProcess): void {
  if (runner.uid !== 0) return;
  const { uid, gid } = statSync(dataDir);
  for (const name of STORE_FILES) {
    const path = join(dataDir, name);
    if (existsSync(path)) runner.chown(path, uid, gid);
  }
}

/** A store that, once closed, gives the files it made the data dir's owner (`matchOwner`). */
class OwnedStore extends Store {
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      matchOwner(this.dir);
    }
  }
}

/**
 * `Store.open` for a CLI command: its files keep the data dir's owner (`matchOwner`), and what
 * killed runs left beside them goes (`removeLeftovers`: copies of the store an offline
 * `compact --purge` would otherwise leave on disk), as when a node starts. A store is never made
 * among other files (`cairn import` into a new data dir makes one).
 */
export async function openStore(dataDir: string): Promise<Store> {
  refuseForeignDataDir(dataDir);
  const store = await Store.open(dataDir);
  removeLeftovers(dataDir);
  return new OwnedStore(store.inner, store.dir);
}
