import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync } from 'node:fs';
import { join } from 'node:path';

import { makeDirs } from '../server/make-dirs.js';
import { ownMark } from '../server/run-marks.js';
import { CliFailure, EXIT_FAILED } from './failure.js';

/**
 * Where a restore into `target` stages its work: a hidden directory inside the target, made here
 * (0700) when missing, named `.restore-<mark>-<hex>` for this process (`run-marks.ts`), so a later
 * run removes it only once this one is gone (`clearDeadStaging`). A target this user cannot make
 * or write is refused, saying what to do.
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
