import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';

import { MARK, markPid, ownMark, stillRuns } from '../server/run-marks.js';
import { DATA_FILE } from './data-dir.js';
import { CliFailure } from './failure.js';

// How a backup through a node shares its DEST with other runs (docs/operations.md, "Backup"):
// each writes its own partial file, named for its process (its pid and start time: `run-marks.ts`),
// so none ever opens or removes a file another run made, a dead run's leftover is told from a live
// run's, and the first to finish installs its copy without replacing another's.

/** The partial file this process's backup writes into a DEST. */
export const partialName = () => `.${DATA_FILE}.partial-${ownMark()}`;

const PARTIAL = new RegExp(`^\\.${DATA_FILE.replace('.', '\\.')}\\.partial-(${MARK})$`);

const taken = (message: string) => new CliFailure('VALIDATION_ERROR', message, undefined, [{ field: 'DEST', message }]);

/**
 * Makes `dest` this run's to write: removes the partial files of backups whose process is gone
 * (killed mid-transfer), and refuses while another backup's process still runs there. Throws
 * CliFailures without an exit code, as `adminCall` does.
 */
export function claimDest(dest: string): void {
  for (const name of readdirSync(dest)) {
    const mark = PARTIAL.exec(name)?.[1];
    if (mark === undefined) continue;
    if (stillRuns(mark)) {
      throw taken(
        `another backup (pid ${markPid(mark)}) is writing into ${dest}: wait for it to end or choose another DEST (if no backup runs, remove ${join(dest, name)})`,
      );
    }
    rmSync(join(dest, name), { force: true });
  }
}

/**
 * Names the whole, synced `partial` in `dest` as its `DATA_FILE`, unless another backup put one
 * there meanwhile (a hard link fails rather than replace it; a file system without hard links is
 * checked first, then renamed). Then syncs `dest`, so the name survives a power loss once the
 * backup is reported.
 */
export function installBackup(partial: string, dest: string): void {
  const final = join(dest, DATA_FILE);
  try {
    linkSync(partial, final);
    unlinkSync(partial);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
    if (code === 'EEXIST' || existsSync(final)) {
      throw taken(`${dest} already holds a store: another backup finished there first; it is kept, this copy not`);
    }
    renameSync(partial, final);
  }
  const dir = openSync(dest, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
