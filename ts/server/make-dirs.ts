import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * `mkdirSync(path, { recursive: true, mode })` that gives up at the first directory it cannot
 * make. Node's recursive mkdir retries for ever where a parent exists yet the child cannot be
 * made (`/proc/x`: ENOENT each time), pinning a core; here each missing directory is made once,
 * outermost first, and the first refusal is thrown. Returns the directories it made, outermost
 * first, so a command that fails can remove what it made and nothing else.
 */
export function makeDirs(path: string, mode = 0o777): string[] {
  const made: string[] = [];
  const missing: string[] = [];
  for (let at = resolve(path); !existsSync(at) && dirname(at) !== at; at = dirname(at)) missing.push(at);
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir, { mode });
      made.push(dir);
    } catch (err) {
      // Made meanwhile by another process (two bridges starting at once): as good as made here.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return made;
}
