import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Session caps through the official MCP client: a token's sessions are bounded by its own share, and
// a full node refuses new sessions instead of closing another token's live one.

let t: TestNode;
let claudeToken: string;
const opened: Client[] = [];

beforeAll(async () => {
  t = await startTestNode({ sessions: { maxSessions: 4, maxPerToken: 2, idleMs: 60_000 } });
});
afterAll(async () => {
  for (const c of opened) await c.close().catch(() => undefined);
  await t.stop();
});

const connect = async (token: string) => {
  const c = await mcpClient(t.url, token);
  opened.push(c);
  return c;
};

const initialize = (token: string) =>
  fetch(`${t.url}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  });

describe('MCP session caps', () => {
  it("one token opening many sessions evicts only its own, never another token's", async () => {
    const codex = await connect((await t.token({ agent: 'codex' })).token);
    claudeToken = (await t.token({ agent: 'claude' })).token;
    const claude = [];
    for (let i = 0; i < 6; i++) claude.push(await connect(claudeToken));
    await expect(codex.listTools()).resolves.toBeDefined();
    // claude keeps its two most recent sessions; its older ones were the ones closed.
    await expect(claude[0]?.ping()).rejects.toThrow();
    await expect(claude[5]?.ping()).resolves.toBeDefined();
    await expect(claude[4]?.ping()).resolves.toBeDefined();
  });

  it('a full node refuses a new session with 503 and Retry-After, and the live ones keep working', async () => {
    const third = (await t.token({ agent: 'third' })).token;
    const fourth = (await t.token({ agent: 'fourth' })).token;
    const held = await connect(third); // the node now holds codex 1 + claude 2 + third 1 = 4
    const refused = await initialize(fourth);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('60');
    const body = (await refused.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(/maximum of 4 MCP sessions/);
    await expect(held.ping()).resolves.toBeDefined();
    // A token at its own share (claude holds 2) still replaces its own oldest session on a full node.
    const renewed = await connect(claudeToken);
    await expect(renewed.ping()).resolves.toBeDefined();
    await expect(held.ping()).resolves.toBeDefined();
  });
});
