import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// The operator's administration (every /v1/admin/ route) is counted apart from the memory traffic
// of the same token: an agent given the admin token (the one a first start prints) that spends its
// minute cannot stop the operator revoking a token, listing them or taking a backup, and a long run
// of admin work leaves the agents theirs.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 5 });
});
afterAll(() => t.stop());

it("an agent spending the admin token's minute on memory verbs leaves its admin routes working", async () => {
  const agent = await mcpClient(t.url, ADMIN); // initialize and its notification: 2 requests
  for (let i = 0; i < 3; i++)
    expect(toolJson(await agent.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
  const spent = await t.call('POST', '/v1/memory/status', { body: {} });
  expect([spent.status, spent.body.error?.code]).toEqual([429, 'RATE_LIMITED']);

  const victim = await t.token({ agent: 'ci-bot' });
  expect((await t.call('GET', '/v1/admin/tokens')).status).toBe(200);
  const revoked = await t.call('DELETE', `/v1/admin/tokens/${victim.id}`);
  expect([revoked.status, (revoked.body.revoked as { id: string }).id]).toEqual([200, victim.id]);
  expect((await t.call('GET', '/v1/admin/check')).status).toBe(200);
  await agent.close();
});

it('admin routes have a minute of their own, and spending it leaves memory traffic alone', async () => {
  const admin = (await t.token({ agent: 'ops', role: 'admin' })).token;
  for (let i = 0; i < 5; i++) expect((await t.call('GET', '/v1/admin/tokens', { token: admin })).status).toBe(200);
  const over = await t.call('GET', '/v1/admin/tokens', { token: admin });
  expect([over.status, over.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
  expect(over.headers.get('retry-after')).toMatch(/^\d+$/);
  expect((await t.call('POST', '/v1/memory/status', { token: admin, body: {} })).status).toBe(200);
});
