import { readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** The `node.json` of a node running on `dataDir`, when one is there and its process lives. */
export function findRunningNode(dataDir: string): NodeFile | null {
  let file: NodeFile;
  try {
    file = JSON.parse(readFileSync(join(dataDir, NODE_FILE), 'utf8')) as NodeFile;
  } catch {
    return null;
  }
  try {
    process.kill(file.pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else; it still holds the store.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return file;
}
