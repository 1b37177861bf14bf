import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { makeDirs } from '../server/make-dirs.js';
import { CliFailure, EXIT_FAILED } from './failure.js';
import { MARK, ownMark, stillRuns } from './run-marks.js';

/**
 * A restore's staging dirs in its target: `.restore-<mark>-<hex>` and that name with `-source`,
 * named for the process that made them (its pid and start time: `run-marks.ts`), so a later
 * restore can tell a dead run's leftovers (a kill -9, a power loss) from a restore still running.
 * `.restore-<hex>`: made before the pid was in the name; whose it is cannot be told.
 */
const STAGING = new RegExp(`^\\.restore-(?:(${MARK})-)?[0-9a-f]{8}(?:-source)?$`);

/**
 * Where a restore into `target` stages its work: a hidden directory inside the target, made here
 * (0700) when missing. A target this user cannot make or write is refused, saying what to do.
 */
export function stagingIn(target: string): { staging: string; made: boolean } {
  const made = !existsSync(target);
  try {
    if (made) makeDirs(target, 0o700);
    accessSync(target, constants.W_OK);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? String(err);
    const message = `cannot write the data dir ${target} (${why}): run the restore as the user that owns it, or make it empty and that user's first`;
    throw new CliFailure('FORBIDDEN', message, EXIT_FAILED, [{ field: '--data-dir', message: why }]);
  }
  const name = `.restore-${ownMark()}-${randomBytes(4).toString('hex')}`;
  return { staging: join(target, name), made };
}

/**
 * Removes from `target` the staging dirs of restores whose process is gone (killed before it could
 * clean up), and returns the ones left: a restore still running, or staging dirs whose maker
 * cannot be told, which the refusal of a non-empty target names.
 */
export function clearDeadStaging(target: string): string[] {
  if (!existsSync(target)) return [];
  const kept: string[] = [];
  for (const name of readdirSync(target)) {
    const mark = STAGING.exec(name)?.[1];
    if (mark === undefined) {
      if (STAGING.test(name)) kept.push(name);
    } else if (stillRuns(mark)) {
      kept.push(name);
    } else {
      rmSync(join(target, name), { recursive: true, force: true });
    }
  }
  return kept;
}
