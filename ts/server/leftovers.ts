import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { removeStagedBackups } from './backup-file.js';
import { NODE_FILE } from './node-file.js';
import { MARK, stillRuns } from './run-marks.js';

// What runs killed before they could clean up (kill -9, the OOM killer, a power loss) leave in a
// data dir. Each holds a whole copy of a store, forgotten data included, which `compact --purge`
// promises is gone from the disk, so whatever opens the store for writing removes them.

/**
 * A restore's staging dirs in its target: `.restore-<mark>-<hex>` and that name with `-source`,
 * named for the process that made them (its pid and start time: `run-marks.ts`), so a later run
 * can tell a dead restore's leftovers from a restore still running. `.restore-<hex>`: made before
 * the pid was in the name; whose it is cannot be told.
 */
const RESTORE_STAGING = new RegExp(`^\\.restore-(?:(${MARK})-)?[0-9a-f]{8}(?:-source)?$`);

/** The names of the restore staging dirs in `dir`, a dead run's or a live one's (none when it is missing). */
export function restoreStaging(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => RESTORE_STAGING.test(name));
  } catch {
    return [];
  }
}

/**
 * Removes from `target` the staging dirs of restores whose process is gone, and returns the ones
 * left: a restore still running, or staging dirs whose maker cannot be told.
 */
export function clearDeadStaging(target: string): string[] {
  if (!existsSync(target)) return [];
  const kept: string[] = [];
  for (const name of readdirSync(target)) {
    const mark = RESTORE_STAGING.exec(name)?.[1];
    if (mark === undefined) {
      if (RESTORE_STAGING.test(name)) kept.push(name);
    } else if (stillRuns(mark)) {
      kept.push(name);
    } else {
      rmSync(join(target, name), { recursive: true, force: true });
    }
  }
  return kept;
}

/**
 * Removes what dead runs left in `dataDir`: a node's backup staging dirs, the staging dirs of
 * restores whose process is gone (a killed restore, then `cairn init` or `serve` on its target),
 * and a killed node's `node.json`. The caller holds the store's lock, so no node runs on it or
 * is backing it up meanwhile (a node starting writes its own `node.json` after this).
 */
export function removeLeftovers(dataDir: string): void {
  removeStagedBackups(dataDir);
  clearDeadStaging(dataDir);
  rmSync(join(dataDir, NODE_FILE), { force: true });
}
