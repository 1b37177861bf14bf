import { readFileSync, statSync } from 'node:fs';

import { restoreStaging } from '../server/leftovers.js';
import { storeLockHolder } from '../server/store-lock.js';
import { unwritableRemedy, unwritableStorePath } from './writable.js';

// What `cairn doctor` says of a store no node runs on: whether a node (or a CLI command) started
// now could open it. Each was "ready" before while `cairn serve` then failed: a data dir on a
// read-only mount or not this user's to write ("locking the store directory: Read-only file
// system"), a store another process holds (STORE_LOCKED).

/** What process `pid` runs, as `ps` would show it, or '' where that cannot be read. */
function commandOf(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '');
    return argv.length === 0 ? '' : `: ${argv.join(' ').replace(/\s+/g, ' ').slice(0, 120)}`;
  } catch {
    return '';
  }
}

/**
 * Why a node started now could not open the store in `dataDir` (which holds one, and no node
 * runs on), or null when it could: another process holds its lock, or this user cannot write
 * the data dir or one of its files.
 */
export function unopenable(dataDir: string): string | null {
  const holder = storeLockHolder(dataDir);
  if (typeof holder === 'number') {
    return `held by another process (pid ${holder}${commandOf(holder)}), which announces no node: \`cairn serve\` and CLI commands cannot open it until that process ends (stop it, kill -TERM ${holder}, if it should not run)`;
  }
  const unwritable = unwritableStorePath(dataDir);
  if (unwritable === null) return null;
  const { path, code } = unwritable;
  const fix =
    code === 'EROFS'
      ? unwritableRemedy(unwritable)
      : `run \`cairn serve\` and CLI commands as the user that owns it (uid ${statSync(path).uid}; the installed service's: sudo -u cairn …)`;
  return `this user cannot write ${path} (${code}), so \`cairn serve\` fails on it (it writes node.json, and the store's lock and log, there): ${fix} (\`cairn check\` reads it as it is)`;
}

/** What to do about a data dir with no store: `init`, or a restore again when one was cut off there. */
export function noStoreRemedy(dataDir: string): string {
  const staging = restoreStaging(dataDir);
  if (staging.length === 0) return 'run `cairn init`';
  return `a restore into it was cut off (its staging dirs are left: ${staging.join(', ')}): run \`cairn database restore SRC --data-dir ${dataDir}\` again, which removes them (or \`cairn init\` for a new store)`;
}
