import { setTimeout as sleep } from 'node:timers/promises';

import { CliFailure, usage } from './failure.js';

/** How long the CLI gives a node that shows no sign of life, unless `CAIRN_NODE_WAIT_MS` says. */
const DEFAULT_WAIT_MS = 15_000;

/**
 * How long (ms) the CLI waits on a node that does not answer before saying UNAVAILABLE:
 * `CAIRN_NODE_WAIT_MS` (a whole number ≥ 1), else 15 s. A bad value is bad usage (exit 2).
 */
export function nodeWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CAIRN_NODE_WAIT_MS;
  if (raw === undefined || raw === '') return DEFAULT_WAIT_MS;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms < 1) throw usage('CAIRN_NODE_WAIT_MS', 'a whole number of milliseconds, ≥ 1');
  return ms;
}

/** The failure of a node at `url` that did not answer for `waitMs`. */
export function silentNode(url: string, waitMs: number, pid?: number): CliFailure {
  const who = pid === undefined ? `the node at ${url}` : `the node at ${url} (pid ${pid})`;
  return new CliFailure(
    'UNAVAILABLE',
    `${who} does not answer (nothing for ${seconds(waitMs)}): it may be stopped or hung; restart it (cairn serve)`,
  );
}

/** `ms` as a person reads a wait: `15 s`, `1.5 s`. */
export const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * Watches the node at `url` while a request to it is outstanding, and calls `silent` once when the
 * node stops answering: after a third of `waitMs` without the reply it asks `/health`, and gives
 * that the rest of `waitMs`; an answer (any status) starts the wait again. Returns the function
 * that stops watching.
 *
 * Why not a deadline on the reply itself: a backup or compact of a big store, or a check of one,
 * replies only when it is done, which may take minutes, and cutting it short would fail work that
 * is going well. A node that answers `/health` is alive and on it (the engine works off the
 * node's event loop, so `/health` is answered meanwhile); one that does not (a stopped or hung
 * process, whose connections the kernel still accepts) would never reply, and waiting on it would
 * hang the CLI forever.
 */
export function watchNode(url: string, waitMs: number, silent: () => void): () => void {
  const stop = new AbortController();
  const quiet = Math.max(1, Math.floor(waitMs / 3));
  const answerMs = waitMs - quiet;
  const answers = async () => {
    const ping = new AbortController();
    const abort = () => ping.abort();
    const timer = setTimeout(abort, answerMs);
    stop.signal.addEventListener('abort', abort, { once: true });
    try {
      await (await fetch(`${url}/health`, { signal: ping.signal })).arrayBuffer();
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
      stop.signal.removeEventListener('abort', abort);
    }
  };
  void (async () => {
    try {
      for (;;) {
        await sleep(quiet, undefined, { signal: stop.signal });
        const alive = await answers();
        if (stop.signal.aborted) return;
        if (!alive) return silent();
      }
    } catch {
      // Stopped while sleeping: the reply came.
    }
  })();
  return () => stop.abort();
}
