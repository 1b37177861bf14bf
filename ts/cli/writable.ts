import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { DATA_FILE, LOG_FILE } from '../engine/store-files.js';
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

/** The files opening a store writes, where they exist: each must be writable, as the data dir is. */
const STORE_WRITES = [DATA_FILE, LOG_FILE, 'LOCK'];

/**
 * The first place this user cannot write that opening a store in `dataDir` writes (the data dir,
 * or its nearest existing directory when it is missing, then the store's files), with why
 * (`EACCES`, `EROFS`), or null. Asked before a node or `init` opens the store: the engine's own
 * failure there says only "locking the store directory: Permission denied (os error 13)".
 */
export function unwritableStorePath(dataDir: string): { path: string; code: string } | null {
  let at = dataDir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  const files = at === dataDir ? STORE_WRITES.map((f) => join(dataDir, f)).filter((p) => existsSync(p)) : [];
  for (const path of [at, ...files]) {
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      return { path, code: (err as NodeJS.ErrnoException).code ?? String(err) };
    }
  }
  return null;
}

/** What to do about `unwritableStorePath`'s answer: remount, or run as the owner, or another dir. */
export function unwritableRemedy(found: { path: string; code: string }): string {
  if (found.code === 'EROFS') {
    return 'its file system is mounted read-only; remount it read-write, or move the store to a writable disk';
  }
  let owner = '';
  try {
    owner = `uid ${statSync(found.path).uid}; `;
  } catch {
    // Gone meanwhile: the advice stands without it.
  }
  return `run this command as the user that owns ${found.path} (${owner}for the installed service: sudo -u cairn …), or choose another --data-dir`;
}

/**
 * Why this user cannot open a store in `dataDir` (make it, or write it or its files), in words that
 * say what to do, with the error's code, or null: what `serve` and `init` say instead of the
 * engine's failure.
 */
export function unwritableDataDir(dataDir: string): { message: string; code: string } | null {
  const found = unwritableStorePath(dataDir);
  if (found === null) return null;
  const what =
    found.path === dataDir || dirname(found.path) === dataDir
      ? `cannot write ${found.path} (${found.code})`
      : `cannot make ${dataDir}: this user may not write ${found.path} (${found.code})`;
  return { message: `${what}: ${unwritableRemedy(found)}`, code: found.code };
}
