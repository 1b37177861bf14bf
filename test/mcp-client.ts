import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { isolatedFetch } from '../ts/cli/isolated-fetch.js';
import { CLI } from './helpers.js';
import type { TestNode } from './node.js';

/**
 * An official MCP client connected to a node's `/v1/mcp` with `token` (and identity headers), on
 * Node's fetch with an abort signal a request, as `cairn mcp` sends them (ts/cli/isolated-fetch.ts).
 */
export async function mcpClient(url: string, token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'cairn-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', url), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    fetch: isolatedFetch(),
  });
  await client.connect(transport);
  return client;
}

/** One official MCP client on `t` for each of `agents` of `user`, each with a token of its own. */
export async function agentClients<const A extends readonly string[]>(
  t: TestNode,
  user: string,
  agents: A,
): Promise<{ -readonly [K in keyof A]: Client }> {
  const clients = await Promise.all(
    agents.map(async (agent) => mcpClient(t.url, (await t.token({ agent, user })).token)),
  );
  return clients as { -readonly [K in keyof A]: Client };
}

/**
 * An official MCP client on a `cairn mcp ...args` process with `env` added to this one's, as a
 * desktop client starts it. Resolves once the bridge has its session with the node.
 */
export async function stdioBridge(name: string, args: string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name, version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', ...args],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

/** The JSON a tool call returned (structuredContent), checked to equal its one text block. */
export function toolJson(result: unknown): { isError: boolean; body: Record<string, unknown> } {
  const r = result as { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };
  const text = r.content?.[0]?.text;
  if (r.content?.length !== 1 || text === undefined) throw new Error('expected exactly one text block');
  const body = r.structuredContent ?? {};
  if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(body))
    throw new Error('text block differs from structuredContent');
  return { isError: r.isError === true, body };
}

/**
 * A JSON-RPC body (text, sent as is: the SDK client would turn a bad number into null, or refuse
 * a batch) POSTed to `/v1/mcp` with `token`: the status, headers and parsed reply (undefined when empty).
 */
/** A raw `initialize` request, as a client opening a session sends it. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

export async function postMcp(url: string, token: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? undefined : JSON.parse(text) };
}
