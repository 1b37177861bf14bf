import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';

import { CliFailure } from './failure.js';

/**
 * Refuses a target directory this user cannot write (or make: its nearest existing directory is
 * checked) before anything is done, with a node running or not. Found by the operator probe: a
 * backup DEST failed late and apart, as VALIDATION_ERROR "EACCES: … mkdir" through a node and as
 * INTERNAL "creating the backup directory: Permission denied" without one, and an export DIR as
 * INTERNAL "EACCES: permission denied, open …/records.jsonl". FORBIDDEN, naming `field` (`DEST`,
 * `DIR`), as a restore says of a target it cannot write; `doing` is the command's work, `who`
 * whom to run it as.
 */
export function needWritable(
  target: string,
  field: string,
  doing: string,
  who = `a user who may write there, or choose another ${field}`,
): void {
  let at = target;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const message = `cannot write ${at} (${code}): run the ${doing} as ${who}`;
    throw new CliFailure('FORBIDDEN', message, undefined, [{ field, message: code }]);
  }
}
