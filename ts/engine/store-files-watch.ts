import { statSync } from 'node:fs';
import { join } from 'node:path';

import { DATA_FILE } from './store-files.js';

/** How often a node looks at its store's data file. */
const EVERY_MS = 2_000;

/** The identity of a file: it changes when the file is deleted and made again, or renamed over. */
function identity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

/**
 * Notices that the store's `data.cairn` is no longer the file the store has open: the data dir
 * emptied or removed under a running node (`rm -rf ~/.cairn`), or the file replaced by hand.
 * The engine keeps writing to the file it opened, which no later open will read, so every write
 * acknowledged from then on would be lost at the next start (found by a failure audit: the node
 * answered 200 and `/health` ok). `lost` hears it once; `around` a compaction or a reopen
 * (either may put a new data file in place) takes the file then there as the store's.
 */
export class FilesWatch {
  #path: string;
  #known: string | null;
  #timer: NodeJS.Timeout;
  #paused = 0;

  constructor(dir: string, lost: (why: string) => void) {
    const path = join(dir, DATA_FILE);
    this.#path = path;
    this.#known = identity(path);
    this.#timer = setInterval(() => {
      if (this.#paused > 0 || this.#known === null) return;
      const now = identity(path);
      if (now === this.#known) return;
      this.#known = null;
      lost(now === null ? `${path} was removed under the node` : `${path} was replaced under the node`);
    }, EVERY_MS);
    this.#timer.unref();
  }

  /** Runs `change` (a compaction, a reopen), which may put a new data file in place, unwatched. */
  async around<T>(change: () => Promise<T>): Promise<T> {
    this.#paused += 1;
    try {
      return await change();
    } finally {
      this.#known = identity(this.#path);
      this.#paused -= 1;
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
