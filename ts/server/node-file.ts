import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { storeLockHolder } from './store-lock.js';

// Kept apart from node.ts (which starts a node, and so loads fastify and every route) for the CLI
// commands that only look for one: `cairn mcp` starts with each desktop client.

/** Where a running node announces itself inside its data dir. */
export const NODE_FILE = 'node.json';

/** What `node.json` holds. */
export interface NodeFile {
  url: string;
  pid: number;
  dataDir: string;
  startedAt: string;
}

/**
 * The `node.json` of a node running on `dataDir`: one whose process holds the store's lock. A
 * `node.json` left by a node that was killed (SIGKILL, OOM, power loss) is ignored even when its
 * pid now belongs to another live process, as it does after a reboot (even the new node's own).
 * Only where the lock cannot be seen (see `storeLockHolder`) is a live pid taken as the sign.
 */
export function findRunningNode(dataDir: string): NodeFile | null {
  let file: NodeFile;
  try {
    file = JSON.parse(readFileSync(join(dataDir, NODE_FILE), 'utf8')) as NodeFile;
  } catch {
    return null;
  }
  const holder = storeLockHolder(dataDir);
  if (holder !== undefined) return holder === file.pid ? file : null;
  try {
    process.kill(file.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else; it still holds the store.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return file;
}
