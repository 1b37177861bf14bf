import { afterAll, beforeAll, expect, it } from 'vitest';

import { postMcp } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// MCP replies carry the x-ratelimit-* headers every HTTP reply carries: the node writes the MCP
// transport's answer itself, and it used to send them on none, so an MCP client could not see a
// 429 coming. A batch of N messages counts N; a call held to its end user's share shows the share.

let t: TestNode;
const VERSION = '2025-06-18';

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 10, rateLimitPerUser: 4 });
});
afterAll(() => t.stop());

const limits = (h: Headers) => ({
  limit: h.get('x-ratelimit-limit'),
  remaining: h.get('x-ratelimit-remaining'),
  reset: h.get('x-ratelimit-reset'),
});

const call = (id: number, user?: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'memory_status', arguments: user === undefined ? {} : { user_id: user } },
});

async function session(token: string, headers: Record<string, string> = {}) {
  const init = await postMcp(
    t.url,
    token,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
    headers,
  );
  expect(init.status).toBe(200);
  const h = {
    ...headers,
    'mcp-session-id': init.headers.get('mcp-session-id') as string,
    'mcp-protocol-version': VERSION,
  };
  return { init, post: (body: unknown) => postMcp(t.url, token, JSON.stringify(body), h) };
}

it("counts down on every MCP reply, a batch's messages each counted", async () => {
  const token = (await t.token({ agent: 'watcher' })).token;
  const s = await session(token);
  expect(limits(s.init.headers)).toEqual({ limit: '10', remaining: '9', reset: expect.stringMatching(/^[1-9]\d*$/) });
  const note = await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect([note.status, limits(note.headers).remaining]).toEqual([202, '8']);
  const one = await s.post(call(1));
  expect([one.status, limits(one.headers)]).toEqual([200, expect.objectContaining({ limit: '10', remaining: '7' })]);
  const three = await s.post([call(2), call(3), call(4)]);
  expect([three.status, limits(three.headers).remaining]).toEqual([200, '4']);
});

it("shows the end user's share when a call is held to it and it has fewer left than the token", async () => {
  const app = (await t.token({ agent: 'app' })).token;
  const s = await session(app, { 'x-cairn-user': 'ursula' }); // the token: 9 left
  const first = await s.post(call(1)); // the token 8, ursula's share 3 of 4
  expect([first.status, limits(first.headers)]).toEqual([200, expect.objectContaining({ limit: '4', remaining: '3' })]);
  const batch = await s.post([call(2), call(3)]); // the token 6, the share 1
  expect([batch.status, limits(batch.headers)]).toEqual([200, expect.objectContaining({ limit: '4', remaining: '1' })]);
});
