import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { NODE_FILE, type NodeFile } from '../server/node-file.js';
import { storeLockHolder } from '../server/store-lock.js';
import { storeProblem } from './data-dir.js';
import { CliFailure, EXIT_FAILED } from './failure.js';
import { seconds } from './node-wait.js';

// `cairn stop`: the node of a data dir asked to shut down as `cairn serve` does on SIGTERM (it
// stops accepting, finishes the requests it is running, their writes durable, and closes the
// store), and waited for until it has let the store go.

/** How long `cairn stop` waits for the node to let go of the store. */
export const STOP_WAIT_MS = 30_000;
const POLL_MS = 100;

/** What `cairn stop` did: stopped the node, or found none (and what it found instead). */
export type StopOutcome =
  | { stopped: true; dataDir: string; url: string; pid: number }
  | {
      stopped: false;
      dataDir: string;
      /** A `node.json` left by a node that is gone (killed, or its machine restarted). */
      stale?: { url: string; pid: number };
      /** The process that holds the store without announcing a node (not signalled). */
      heldBy?: number;
    };

/** The `node.json` of `dataDir` as written, or null when there is none to read. */
function readNodeFile(dataDir: string): NodeFile | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, NODE_FILE), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') return null;
    // Saying "no node runs" about a data dir this user may not look into would be a guess.
    throw storeProblem(dataDir) ?? new CliFailure('FORBIDDEN', `cannot read ${join(dataDir, NODE_FILE)}`);
  }
  try {
    const file = JSON.parse(text) as Partial<NodeFile>;
    return typeof file.pid === 'number' && typeof file.url === 'string' ? (file as NodeFile) : null;
  } catch {
    return null;
  }
}

/** Whether a process `pid` exists (EPERM: it does, as another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The node running on `dataDir`, or what was found instead. A node runs only while the pid its
 * `node.json` names holds the store's lock (`storeLockHolder`): a pid alone may since have been
 * given to an unrelated process, which must never be signalled. Where the lock cannot be read,
 * a live pid cannot be told from such a one, so it is refused, saying what to do.
 */
function findNode(dataDir: string): { running: NodeFile } | { none: StopOutcome } {
  const file = readNodeFile(dataDir);
  const holder = storeLockHolder(dataDir);
  if (file !== null && holder === file.pid) return { running: file };
  if (holder === undefined && file !== null && alive(file.pid)) {
    throw new CliFailure(
      'UNAVAILABLE',
      `${join(dataDir, NODE_FILE)} names the node at ${file.url} (pid ${file.pid}), but which process holds the store cannot be read here (its LOCK file or /proc/locks), so pid ${file.pid} may no longer be that node: not signalled. If it is, stop it yourself: kill -TERM ${file.pid}`,
      EXIT_FAILED,
      [{ pid: file.pid, url: file.url }],
    );
  }
  const none: StopOutcome = {
    stopped: false,
    dataDir,
    ...(file === null ? {} : { stale: { url: file.url, pid: file.pid } }),
    ...(typeof holder === 'number' ? { heldBy: holder } : {}),
  };
  return { none };
}

/** Whether `pid` has let go of the store of `dataDir` (or is gone, where the lock cannot be read). */
function released(dataDir: string, pid: number): boolean {
  const holder = storeLockHolder(dataDir);
  return holder === undefined ? !alive(pid) : holder !== pid;
}

/**
 * Sends the node of `dataDir` SIGTERM and waits (≤ `waitMs`) until it has let the store go, so
 * the next command can open it. Never sends more: a second SIGTERM would end a node that is
 * still finishing its requests without the rest of its shutdown. A node that takes longer
 * (a long import or compaction runs to its end first) is said as such, exit 1.
 */
export async function stopNode(dataDir: string, waitMs = STOP_WAIT_MS): Promise<StopOutcome> {
  const found = findNode(dataDir);
  if ('none' in found) return found.none;
  const { url, pid } = found.running;
  try {
    process.kill(pid, 'SIGTERM');
  } catch (err) {
    // ESRCH: it exited since it was found, so no node runs.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return { stopped: false, dataDir };
    throw new CliFailure(
      'FORBIDDEN',
      `the node at ${url} (pid ${pid}) runs as another user: run cairn stop as that user (for the installed service: sudo -u cairn …) or with sudo`,
      EXIT_FAILED,
      [{ pid, url }],
    );
  }
  for (const deadline = Date.now() + waitMs; !released(dataDir, pid); await sleep(POLL_MS)) {
    if (Date.now() < deadline) continue;
    throw new CliFailure(
      'UNAVAILABLE',
      `asked the node at ${url} (pid ${pid}) to stop (SIGTERM), but it still holds ${dataDir} after ${seconds(waitMs)}: it finishes the requests it is running first (a long import, backup or compaction takes as long as it takes), then exits; see its log, and wait for it to exit (ps -p ${pid}). If it is hung, kill -KILL ${pid} ends it (the writes it acknowledged are durable)`,
      EXIT_FAILED,
      [{ pid, url }],
    );
  }
  return { stopped: true, dataDir, url, pid };
}

/** What a person reads of `outcome`. */
function said(outcome: StopOutcome): string {
  if (outcome.stopped) return `stopped the node at ${outcome.url} (pid ${outcome.pid})`;
  const parts = [`no node runs on ${outcome.dataDir}`];
  if (outcome.stale !== undefined) {
    parts.push(
      `its node.json (the node at ${outcome.stale.url}, pid ${outcome.stale.pid}) was left by a node that is gone`,
    );
  }
  if (outcome.heldBy !== undefined) {
    parts.push(
      `its store is held by pid ${outcome.heldBy}, which announces no node (a node shutting down or starting, or another cairn command): not signalled`,
    );
  }
  return parts.join('; ');
}

/**
 * `cairn stop`: stops the node of `dataDir` (`stopNode`). Finding none is no failure (exit 0,
 * `{"stopped":false}`): stopping twice leaves the node as stopped as once.
 */
export async function runStop(dataDir: string, json: boolean): Promise<number> {
  const outcome = await stopNode(dataDir);
  process.stdout.write(json ? `${JSON.stringify(outcome)}\n` : `${said(outcome)}\n`);
  return 0;
}
