import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';

import { usage } from './failure.js';

/**
 * The user's home directory: `$HOME`, else the account's. Refused (exit 2, naming HOME) when it
 * is not an absolute path: an empty `HOME=` would resolve against the current directory and put
 * a store, or a client config holding a live token, wherever the shell happens to be. `instead`
 * says what makes the home unneeded.
 */
export function homeDir(env: NodeJS.ProcessEnv, instead: string): string {
  const home = env.HOME ?? homedir();
  if (!isAbsolute(home)) {
    throw usage('HOME', `must be an absolute path, got ${JSON.stringify(home)}: set it, or ${instead}`);
  }
  return home;
}
