import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { CliFailure } from './failure.js';

/** The store directory: `--data-dir`, else `CAIRN_DATA_DIR`, else `~/.cairn`. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = flag ?? env.CAIRN_DATA_DIR ?? join(homedir(), '.cairn');
  return resolve(dir);
}

/** The engine's data file: a data dir without it holds no store. */
export const DATA_FILE = 'data.cairn';

/** The engine's write-ahead log: acknowledged writes not yet checkpointed into `DATA_FILE`. */
export const LOG_FILE = 'wal.cairn';

/**
 * Refuses (NOT_FOUND; the command decides the exit code) when `dataDir` holds no store, so a
 * command that reads or changes a store never creates one at a mistyped `--data-dir`. `then` is
 * what to do about it, when there is something better to say than the path.
 */
export function needStore(dataDir: string, then?: string): void {
  if (!existsSync(join(dataDir, DATA_FILE))) {
    throw new CliFailure('NOT_FOUND', `no store at ${dataDir}${then === undefined ? '' : `: ${then}`}`);
  }
}
