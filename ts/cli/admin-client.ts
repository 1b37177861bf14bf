import type { NodeFile } from '../server/node.js';

/** Calls a running node's admin API with the admin token; throws with the node's error message. */
export async function adminCall(
  node: NodeFile,
  token: string | undefined,
  method: string,
  path: string,
  body?: object,
) {
  if (token === undefined || token === '') {
    throw new Error(`a node is running at ${node.url}; set CAIRN_ADMIN_TOKEN to its admin token`);
  }
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) {
    const err = json.error as { code?: string; message?: string } | undefined;
    throw new Error(`${err?.code ?? res.status}: ${err?.message ?? 'request failed'}`);
  }
  return json;
}
