import type { NodeFile } from '../server/node-file.js';
import { CliFailure, refusedBy } from './failure.js';
import { nodeWaitMs, silentNode, watchNode } from './node-wait.js';

/** A running node as the CLI reaches it: its URL, and its pid when known (for what a silent node is told). */
type Reached = Pick<NodeFile, 'url'> & { pid?: number | undefined };

/** A request to a running node under watch (`watchedRequest`). */
export interface Watch {
  token: string;
  signal: AbortSignal;
  unanswered: (err: unknown) => CliFailure;
  stop: () => void;
}

/**
 * A request to a running node under watch: refused at once without the admin token
 * (UNAUTHENTICATED); `signal` aborts it when the node stays silent, not even `/health`, for
 * `CAIRN_NODE_WAIT_MS` (node-wait.ts, which says why a slow reply is waited for); `unanswered`
 * says what a failed request was (UNAVAILABLE: silent, or refusing the connection); `stop` ends
 * the watch.
 */
export function watchedRequest(node: Reached, token: string | undefined): Watch {
  if (token === undefined || token === '') {
    // A node found on the data dir runs (its pid holds the store); one named by `--url` is only
    // where the user said to go, and may not run at all.
    throw new CliFailure(
      'UNAUTHENTICATED',
      node.pid === undefined
        ? `set CAIRN_ADMIN_TOKEN to the admin token of the node at ${node.url}`
        : `a node is running at ${node.url}; set CAIRN_ADMIN_TOKEN to its admin token`,
    );
  }
  const waitMs = nodeWaitMs();
  const request = new AbortController();
  let silent = false;
  const stop = watchNode(node.url, waitMs, () => {
    silent = true;
    request.abort();
  });
  const unanswered = (err: unknown): CliFailure => {
    if (silent) return silentNode(node.url, waitMs, node.pid);
    const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    return new CliFailure('UNAVAILABLE', `the node at ${node.url} does not answer (${why})`);
  };
  return { token, signal: request.signal, unanswered, stop };
}

/**
 * Calls a running node's admin API with the admin token. Throws CliFailures without an exit code
 * (the command decides it): the node's own §3 error when it refused, UNAUTHENTICATED without a
 * token, UNAVAILABLE when the node does not answer: refuses the connection, or stays silent (not
 * even `/health`) for `CAIRN_NODE_WAIT_MS` (node-wait.ts, which says why a slow reply is waited for).
 */
export async function adminCall(node: Reached, token: string | undefined, method: string, path: string, body?: object) {
  const watch = watchedRequest(node, token);
  try {
    const res = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${watch.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: watch.signal,
    });
    // The body is waited for under the same watch: a node may stop between headers and body.
    const text = await res.text();
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new CliFailure(
        'INTERNAL',
        `the node at ${node.url} answered ${path} with something that is not JSON (HTTP ${res.status})`,
      );
    }
    if (!res.ok) throw refusedBy(json, res.status, node.url);
    return json;
  } catch (err) {
    if (err instanceof CliFailure) throw err;
    throw watch.unanswered(err);
  } finally {
    watch.stop();
  }
}
