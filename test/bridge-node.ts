import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { Tokens } from '../ts/auth/tokens.js';
import { Store } from '../ts/index.js';

// What the tests of a `cairn mcp` bridge that starts its own node read of that node.

/** Whether process `pid` runs. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pid in data dir `dir`'s node.json, when a node left one. */
export function nodePid(dir: string): number | undefined {
  const file = join(dir, 'node.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { pid: number }).pid;
}

/** A token for a bridge, made in the store in `dir` before any node holds it. */
export async function bridgeToken(dir: string): Promise<string> {
  const store = await Store.open(dir);
  try {
    return (await new Tokens(store).create({ agent: 'desktop', user: 'ann' })).token;
  } finally {
    await store.close();
  }
}
