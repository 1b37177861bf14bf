import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The store directory: `--data-dir`, else `CAIRN_DATA_DIR`, else `~/.cairn`. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = flag ?? env.CAIRN_DATA_DIR ?? join(homedir(), '.cairn');
  return resolve(dir);
}
