import type { NodeFile } from '../server/node-file.js';
import { CliFailure, refusedBy } from './failure.js';
import { nodeWaitMs, silentNode, watchNode } from './node-wait.js';

/**
 * Calls a running node's admin API with the admin token. Throws CliFailures without an exit code
 * (the command decides it): the node's own §3 error when it refused, UNAUTHENTICATED without a
 * token, UNAVAILABLE when the node does not answer: refuses the connection, or stays silent (not
 * even `/health`) for `CAIRN_NODE_WAIT_MS` (node-wait.ts, which says why a slow reply is waited for).
 */
export async function adminCall(
  node: Pick<NodeFile, 'url'> & { pid?: number | undefined },
  token: string | undefined,
  method: string,
  path: string,
  body?: object,
) {
  if (token === undefined || token === '') {
    throw new CliFailure(
      'UNAUTHENTICATED',
      `a node is running at ${node.url}; set CAIRN_ADMIN_TOKEN to its admin token`,
    );
  }
  const waitMs = nodeWaitMs();
  const request = new AbortController();
  let silent = false;
  const stopWatching = watchNode(node.url, waitMs, () => {
    silent = true;
    request.abort();
  });
  try {
    const res = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: request.signal,
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
    if (!res.ok) throw refusedBy(json, res.status);
    return json;
  } catch (err) {
    if (err instanceof CliFailure) throw err;
    if (silent) throw silentNode(node.url, waitMs, node.pid);
    const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new CliFailure('UNAVAILABLE', `the node at ${node.url} does not answer (${why})`);
  } finally {
    stopWatching();
  }
}
