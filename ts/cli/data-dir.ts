import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { DATA_FILE, LOG_FILE } from '../engine/store-files.js';
import { CliFailure, usage } from './failure.js';
import { homeDir } from './home.js';

/**
 * The store directory: `--data-dir`, else `CAIRN_DATA_DIR`, else `~/.cairn`. An empty one is
 * refused naming where it came from, as an empty CAIRN_HOST is: `CAIRN_DATA_DIR=` in an env file
 * would otherwise make the current directory the store. So is one starting with an unexpanded `~`.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const [dir, from] = flag !== undefined ? [flag, '--data-dir'] : [env.CAIRN_DATA_DIR, 'CAIRN_DATA_DIR'];
  if (dir === undefined) return join(homeDir(env, 'give the store with --data-dir or CAIRN_DATA_DIR'), '.cairn');
  if (dir === '') throw usage(from, 'must name the store directory, got ""');
  // Only a shell expands "~", and not inside quotes, in an env file or after `--data-dir=`: the
  // store would go into a directory named "~" under the current one, another one from each.
  if (dir.startsWith('~')) {
    const meant = /^~(\/|$)/.test(dir) && env.HOME ? ` (${env.HOME}${dir.slice(1)}?)` : '';
    throw usage(from, `${JSON.stringify(dir)} starts with a "~" no shell expanded: give the whole path${meant}`);
  }
  const why = notADirectory(dir);
  if (why !== null) throw usage(from, `${resolve(dir)} ${why}`);
  return resolve(dir);
}

/**
 * Why `path` cannot be a directory Cairn makes or writes into (a file is there, or on its way),
 * or null when it is one or is missing: said before anything tries to, which otherwise failed as
 * INTERNAL "File exists (os error 17)" or "ENOTDIR: … scandir", and `cairn init` warned to
 * `chmod 700` the file.
 */
export function notADirectory(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : 'is a file, not a directory';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'has a file where a directory should be' : null;
  }
}

export { DATA_FILE, LOG_FILE };

/**
 * Why `dataDir` holds no store this user can use, or null when it holds one: NOT_FOUND when
 * there is none, FORBIDDEN when this user may not look (a service's data dir, 0700 and owned by
 * its user: saying "no store" there would send the operator to `cairn init`). `then` is what to
 * do about a missing store, when there is something better to say than the path. The command
 * decides the exit code.
 */
export function storeProblem(dataDir: string, then?: string): CliFailure | null {
  try {
    statSync(join(dataDir, DATA_FILE));
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      return new CliFailure(
        'FORBIDDEN',
        `cannot read ${dataDir} (permission denied): run the command as the user that owns it (for the installed service: sudo -u cairn …) or with sudo`,
        undefined,
        [{ field: '--data-dir', message: 'permission denied' }],
      );
    }
    return new CliFailure('NOT_FOUND', `no store at ${dataDir}${then === undefined ? '' : `: ${then}`}`);
  }
}

/**
 * Refuses (see `storeProblem`) when `dataDir` holds no store this user can use, so a command that
 * reads or changes a store never creates one at a mistyped `--data-dir`.
 */
export function needStore(dataDir: string, then?: string): void {
  const problem = storeProblem(dataDir, then);
  if (problem !== null) throw problem;
}
