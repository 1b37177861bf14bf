import { spawn } from 'node:child_process';
import { closeSync, openSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { makeDirs } from '../server/make-dirs.js';
import { findRunningNode } from '../server/node-file.js';
import { storeLockHolder } from '../server/store-lock.js';
import { readStartFailure, START_FD, type StartFailure } from './start-report.js';

// The node `cairn mcp` starts when none runs on its data dir (docs/operations.md, "MCP clients").

/** How long the bridge waits for a node it started to announce itself. */
const START_MS = 15_000;
const POLL_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A `cairn serve` started in the background, and how it ended once it has. */
interface Child {
  /** Why it did not start, once it exited (undefined while it runs). */
  ended(): StartFailure | undefined;
  /** Stops listening to it; the node itself runs on. */
  release(): void;
}

/**
 * `node.log` is set aside as `node.log.1` (replacing the one before) when a node is started and it
 * has reached this size, so the log of nodes started in the background stays under about twice it.
 */
const LOG_CAP = 8 << 20;

/** Opens `node.log` in `dataDir` to append to, set aside first once it reaches `LOG_CAP`. */
function openLog(dataDir: string): number {
  const path = join(dataDir, 'node.log');
  try {
    if (statSync(path).size >= LOG_CAP) renameSync(path, `${path}.1`);
  } catch {
    // No log yet.
  }
  return openSync(path, 'a', 0o600);
}

/**
 * Starts `cairn serve` on `dataDir`, its output appended to the file open at `log`. It logs at
 * `warn` unless `CAIRN_LOG_LEVEL` says otherwise: a line a request (about 420 bytes) would grow
 * the log by megabytes a day on a busy team's node, and no one reads it.
 */
function spawnServe(dataDir: string, log: number, anyPort: boolean): Child {
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  // Its own pipe says why it did not start (`start-report.ts`): the log is shared by every node.
  const child = spawn(process.execPath, [main, 'serve', '--data-dir', dataDir], {
    detached: true,
    stdio: ['ignore', log, log, 'pipe'],
    env: { CAIRN_LOG_LEVEL: 'warn', ...process.env, ...(anyPort ? { CAIRN_PORT: '0' } : {}), [START_FD]: '3' },
  });
  const pipe = child.stdio[3] as Readable;
  let said = '';
  pipe.setEncoding('utf8');
  pipe.on('data', (chunk: string) => {
    said += chunk;
  });
  pipe.on('error', () => undefined);
  let failure: StartFailure | undefined;
  // 'close': it exited and its pipe is read to the end.
  child.once('close', (code, signal) => {
    failure = readStartFailure(said) ?? { held: false, message: `it exited (${signal ?? `code ${code}`})` };
  });
  child.unref();
  return { ended: () => failure, release: () => pipe.destroy() };
}

/** Polls until a node runs on `dataDir` (its URL), `child` ends (why), or `deadline` passes. */
async function awaitChild(dataDir: string, child: Child, deadline: number): Promise<string | StartFailure | null> {
  while (Date.now() < deadline) {
    const node = findRunningNode(dataDir);
    if (node !== null) return node.url;
    const failure = child.ended();
    if (failure !== undefined) return failure;
    await sleep(POLL_MS);
  }
  return null;
}

/**
 * Polls while another process holds the store of `dataDir`: the URL of the node it turns out to
 * be, or null once the store is let go without a node or `deadline` passes.
 */
async function awaitHolder(dataDir: string, deadline: number): Promise<string | null> {
  while (Date.now() < deadline) {
    const node = findRunningNode(dataDir);
    if (node !== null) return node.url;
    if (storeLockHolder(dataDir) === null) return null;
    await sleep(POLL_MS);
  }
  return null;
}

/**
 * Starts `cairn serve` on `dataDir` in the background and waits (≤ 15 s) for a node to announce
 * itself in `node.json`. Resolves with its URL, or with why none did: a node that failed for its
 * own reason (a refused setting) at once, with what it said. When another process holds the
 * store (most often the node of another bridge started at the same moment, which announces itself
 * once it listens), that node is waited for, and one is started again if the store is let go
 * without one. When another program holds the default port (4000 is a common development port,
 * and a second store's node takes it too) and `CAIRN_PORT` does not pin one, the node is started
 * again on any free port (`anyPort` in the reply): the bridge finds it in `node.json` either way,
 * where it once failed to start at all.
 */
export async function startBackgroundNode(
  dataDir: string,
): Promise<{ url: string; anyPort?: true } | { failed: StartFailure }> {
  makeDirs(dataDir, 0o700);
  const log = openLog(dataDir);
  const deadline = Date.now() + START_MS;
  const silent: StartFailure = { held: false, message: 'it did not announce itself within 15 s' };
  let failed = silent;
  let anyPort = false;
  try {
    while (Date.now() < deadline) {
      const child = spawnServe(dataDir, log, anyPort);
      const outcome = await awaitChild(dataDir, child, deadline).finally(child.release);
      if (typeof outcome === 'string') return anyPort ? { url: outcome, anyPort: true } : { url: outcome };
      failed = outcome ?? silent;
      if (failed.portTaken === true && !anyPort && process.env.CAIRN_PORT === undefined) {
        anyPort = true;
        continue;
      }
      if (!failed.held) break;
      const url = await awaitHolder(dataDir, deadline);
      if (url !== null) return { url };
    }
  } finally {
    closeSync(log);
  }
  return { failed };
}
