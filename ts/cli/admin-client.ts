import type { NodeFile } from '../server/node-file.js';
import { CliFailure, refusedBy } from './failure.js';

/**
 * Calls a running node's admin API with the admin token. Throws CliFailures without an exit code
 * (the command decides it): the node's own §3 error when it refused, UNAUTHENTICATED without a
 * token, UNAVAILABLE when the node does not answer.
 */
export async function adminCall(
  node: NodeFile,
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
  let res: Response;
  try {
    res = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new CliFailure('UNAVAILABLE', `the node at ${node.url} does not answer (${why})`);
  }
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw refusedBy(json, res.status);
  return json;
}
