import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The file the engine takes its exclusive lock on (`flock`), inside the data dir. */
const LOCK_FILE = 'LOCK';

/** One exclusive `flock` in `/proc/locks`: `1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF`. */
const EXCLUSIVE_FLOCK = /^\d+:\s+FLOCK\s+\S+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/;

/**
 * The pid of the process holding the engine's lock on the store in `dataDir`: a number, `null`
 * when no process holds it (a crashed holder's lock went with it), or `undefined` when this
 * cannot be told (no `/proc/locks`, a data dir this user may not read). It is read from the
 * kernel's lock table, not by trying the lock, so looking never makes a node that is opening the
 * store at that moment fail with `STORE_LOCKED`. The table names a file by device and inode, but
 * its device is not the one `stat` gives on btrfs, so a lock counts as the store's when its inode
 * matches and its pid is the one the engine wrote into `LOCK` on taking it.
 */
export function storeLockHolder(dataDir: string): number | null | undefined {
  const path = join(dataDir, LOCK_FILE);
  let inode: number;
  let writtenPid: number;
  try {
    inode = statSync(path).ino;
    writtenPid = Number(readFileSync(path, 'utf8').trim());
  } catch (err) {
    // A store never opened has no LOCK file, so nothing holds it.
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  for (const line of table.split('\n')) {
    const m = EXCLUSIVE_FLOCK.exec(line);
    if (m !== null && Number(m[2]) === inode && Number(m[1]) === writtenPid) return writtenPid;
  }
  return null;
}
