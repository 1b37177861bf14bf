import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// An app serving many end users through one token (X-Cairn-User or user_id): one end user may make
// at most a share of the token's requests a minute (a quarter by default), so a noisy one is
// refused alone and the token's others go on. Tokens bound to a user, and calls naming no user
// (a team's agents), keep the whole limit.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 40 }); // a user's share: 10
});
afterAll(() => t.stop());

const status = (token: string, user?: string, body: object = {}) =>
  t.call('POST', '/v1/memory/status', {
    token,
    body,
    ...(user === undefined ? {} : { headers: { 'x-cairn-user': user } }),
  });

it('refuses the end user past its share (429 naming X-Cairn-User, Retry-After), not the others', async () => {
  const app = (await t.token({ agent: 'app' })).token;
  for (let i = 0; i < 10; i++) expect((await status(app, 'noisy')).status).toBe(200);
  const before = await t.txn();
  const over = await t.call('POST', '/v1/memory/note_write', {
    token: app,
    headers: { 'x-cairn-user': 'noisy' },
    body: { key: 'k', value: 1, kind: 'decision' },
  });
  expect([over.status, over.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
  expect(over.body.error?.message).toContain('10 of its 40 requests a minute');
  expect(over.body.error?.details).toEqual([{ field: 'X-Cairn-User', message: expect.any(String) }]);
  expect(over.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(await t.txn()).toBe(before);
  // The same user named by the body's user_id is the same user.
  const byBody = await status(app, undefined, { user_id: 'noisy' });
  expect([byBody.status, byBody.body.error?.details]).toEqual([429, [expect.objectContaining({ field: 'user_id' })]]);
  for (let i = 0; i < 10; i++) expect((await status(app, `quiet-${i % 3}`)).status).toBe(200);
});

it('over MCP: the noisy user’s tool calls are RATE_LIMITED tool errors, another user’s session answers', async () => {
  const app = (await t.token({ agent: 'app' })).token;
  const noisy = await mcpClient(t.url, app, { 'x-cairn-user': 'noisy' });
  for (let i = 0; i < 10; i++)
    expect(toolJson(await noisy.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
  const refused = toolJson(await noisy.callTool({ name: 'memory_status', arguments: {} }));
  expect([refused.isError, (refused.body.error as { code: string }).code]).toEqual([true, 'RATE_LIMITED']);
  const quiet = await mcpClient(t.url, app, { 'x-cairn-user': 'quiet' });
  expect(toolJson(await quiet.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
  await noisy.close();
  await quiet.close();
});

it('leaves the whole limit to a token bound to a user and to calls that name no user', async () => {
  const bound = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const team = (await t.token({ agent: 'codex' })).token;
  for (let i = 0; i < 20; i++) {
    expect((await status(bound, i % 2 === 0 ? 'ann' : undefined)).status).toBe(200);
    expect((await status(team)).status).toBe(200);
  }
});
