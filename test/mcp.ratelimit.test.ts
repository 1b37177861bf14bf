import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, postMcp, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The per-token rate limit on /v1/mcp: each message of a JSON-RPC batch is one request, and a
// batch that does not fit is refused whole (429 RATE_LIMITED, nothing of it run).

let t: TestNode;
let token: string;
const VERSION = '2025-06-18';

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 10 });
  token = (await t.token({ agent: 'batcher' })).token;
});
afterAll(() => t.stop());

const post = (body: unknown, headers: Record<string, string> = {}) =>
  postMcp(t.url, token, JSON.stringify(body), headers);

const write = (i: number) => ({
  jsonrpc: '2.0',
  id: `w${i}`,
  method: 'tools/call',
  params: { name: 'memory_note_write', arguments: { key: `k${i}`, value: i, kind: 'decision' } },
});

async function notes(): Promise<number> {
  const store = t.node.store;
  const r = await store.notes(
    'note_list',
    { tenant: 'local', user: 'default', scope: 'default', agent: 'x' },
    {
      limit: 100,
    },
  );
  return (r as { notes: unknown[] }).notes.length;
}

it('counts each message of a batch, and refuses a batch past the limit whole', async () => {
  const init = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  expect(init.status).toBe(200);
  const h = { 'mcp-session-id': init.headers.get('mcp-session-id') as string, 'mcp-protocol-version': VERSION };
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202); // 2 used

  const five = await post([1, 2, 3, 4, 5].map(write), h); // 7 used
  expect(five.status).toBe(200);
  expect(five.json).toHaveLength(5);
  expect(await notes()).toBe(5);

  // 5 more would be 12 of 10: refused in full, the request itself counted (8 used).
  const before = await t.txn();
  const over = await post([6, 7, 8, 9, 10].map(write), h);
  expect(over.status).toBe(429);
  expect(over.json.error.code).toBe('RATE_LIMITED');
  expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(await t.txn()).toBe(before);
  expect(await notes()).toBe(5);

  const two = await post([11, 12].map(write), h); // 10 used
  expect(two.status).toBe(200);
  expect(await notes()).toBe(7);

  const single = await post(write(13), h);
  expect([single.status, single.json.error?.code]).toEqual([429, 'RATE_LIMITED']);
  expect(await notes()).toBe(7);
});

// Found by an audit: the count was kept per Authorization header as sent, and auth accepts any
// case of `Bearer` and any whitespace, so each spelling of one token had a fresh limit.
it('counts every spelling of one token in one bucket, over HTTP and over MCP batches', async () => {
  const own = (await t.token({ agent: 'speller' })).token;
  const spellings = ['Bearer ', 'bearer ', 'BEARER ', 'Bearer  ', 'Bearer\t', 'bEaReR   '];
  const whoami = (prefix: string, suffix = '') =>
    fetch(`${t.url}/v1/whoami`, { headers: { authorization: `${prefix}${own}${suffix}` } }).then((r) => r.status);
  const codes: number[] = [];
  for (let i = 0; i < 6; i++) codes.push(await whoami(spellings[i] as string, i % 2 === 0 ? '' : '  '));
  expect(codes).toEqual([200, 200, 200, 200, 200, 200]); // 6 of 10 used

  const init = await fetch(`${t.url}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${own}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  }); // 7 used
  expect(init.status).toBe(200);
  const sid = init.headers.get('mcp-session-id') as string;
  const batch = (spaces: number, ids: number[]) =>
    fetch(`${t.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer${' '.repeat(spaces)}${own}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': VERSION,
      },
      body: JSON.stringify(ids.map((id) => ({ jsonrpc: '2.0', id, method: 'tools/list' }))),
    }).then((r) => r.status);
  expect(await batch(2, [1, 2])).toBe(200); // 9 used
  // Two more would be 11 of 10, whatever the spacing: refused.
  expect(await batch(3, [3, 4])).toBe(429);
  expect(await batch(7, [5, 6])).toBe(429);
  for (const prefix of spellings) expect(await whoami(prefix)).toBe(429);
  // Another token keeps its own count.
  const other = (await t.token({ agent: 'other' })).token;
  expect((await t.call('GET', '/v1/whoami', { token: other })).status).toBe(200);
});

// Found by a review: the official SDK client probes `GET /v1/mcp` for a push stream after
// `initialize`, and the 405 "no push stream" answer was counted, so every session cost a request
// the client never asked for. The answer is a constant refusal before auth, as the other 405s of
// /v1/mcp, which were already free; a 429 to a flood of them would cost the node the same.
it("does not count the SDK client's push-stream probe (GET /v1/mcp, 405) against the token", async () => {
  const own = (await t.token({ agent: 'prober' })).token;
  const client = await mcpClient(t.url, own); // initialize and notifications/initialized: 2 used
  try {
    for (let i = 0; i < 8; i++) {
      const r = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
      expect(r.isError, `call ${i + 1}`).toBe(false);
    } // 10 used
    await expect(client.callTool({ name: 'memory_status', arguments: {} })).rejects.toThrow(/429|RATE_LIMITED/);
  } finally {
    await client.close();
  }
  const prober = (await t.token({ agent: 'flood' })).token;
  for (let i = 0; i < 30; i++) {
    const r = await fetch(`${t.url}/v1/mcp`, { headers: { authorization: `Bearer ${prober}` } });
    expect([r.status, r.headers.get('allow')]).toEqual([405, 'POST, DELETE']);
  }
  expect((await t.call('GET', '/v1/whoami', { token: prober })).status).toBe(200);
});
