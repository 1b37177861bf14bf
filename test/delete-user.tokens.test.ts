import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Erasing a user revokes the tokens bound to that user: before, such a token still authenticated
// after delete_user and its next write started the erased user anew (issue 4, item 1).

let t: TestNode;
let app: string;

beforeAll(async () => {
  t = await startTestNode();
  app = (await t.token({ agent: 'app' })).token;
});
afterAll(() => t.stop());

const remember = (token: string, content: string, headers: Record<string, string> = {}) =>
  t.call('POST', '/v1/memory/remember', { token, body: { content }, headers });

const tokenState = async (id: string) => {
  const list = await t.call('GET', '/v1/admin/tokens');
  return (list.body.tokens as { id: string; revokedAt?: string }[]).find((r) => r.id === id);
};

describe('delete_user and the tokens bound to the user', () => {
  it('revokes every token bound to the erased user, and no other', async () => {
    const erin = await t.token({ agent: 'claude', user: 'erin' });
    const erinAdmin = await t.token({ agent: 'ops', user: 'erin', role: 'admin' });
    const fay = await t.token({ agent: 'claude', user: 'fay' });
    expect((await remember(erin.token, 'Erin keeps the lighthouse log.')).status).toBe(200);
    expect((await remember(fay.token, 'Fay tends the orchard.')).status).toBe(200);

    const r = await t.call('POST', '/v1/memory/delete_user', {
      token: app,
      body: { confirm: true },
      headers: { 'x-cairn-user': 'erin' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ state: 'forgotten', tokens_revoked: 2 });

    // The erased user's tokens no longer authenticate, so nothing can start the user anew.
    const after = await remember(erin.token, 'Erin is back.');
    expect([after.status, after.body.error?.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect((await t.call('GET', '/v1/whoami', { token: erinAdmin.token })).status).toBe(401);
    expect((await tokenState(erin.id))?.revokedAt).toEqual(expect.any(String));
    expect((await tokenState(erinAdmin.id))?.revokedAt).toEqual(expect.any(String));
    const status = await t.call('GET', '/v1/memory/status', { token: app, headers: { 'x-cairn-user': 'erin' } });
    expect(status.body.scopes).toEqual([]);

    // Another user's token and the app's own token (bound to no user) keep working.
    expect((await remember(fay.token, 'Fay planted pears.')).status).toBe(200);
    expect((await tokenState(fay.id))?.revokedAt).toBeUndefined();
    expect((await remember(app, 'Gil rows the ferry.', { 'x-cairn-user': 'gil' })).status).toBe(200);

    // Again: already forgotten, and no token is left to revoke.
    const again = await t.call('POST', '/v1/memory/delete_user', {
      token: app,
      body: { confirm: true },
      headers: { 'x-cairn-user': 'erin' },
    });
    expect(again.body).toEqual({ state: 'already_forgotten', tokens_revoked: 0 });
  });

  it('a token bound to the user that erases its user is revoked with it', async () => {
    const hal = await t.token({ agent: 'claude', user: 'hal' });
    expect((await remember(hal.token, 'Hal mends nets.')).status).toBe(200);
    const r = await t.call('POST', '/v1/memory/delete_user', { token: hal.token, body: { confirm: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: 'forgotten', tokens_revoked: 1 });
    expect((await remember(hal.token, 'Hal again.')).status).toBe(401);
  });

  it('an open MCP session of a bound token stops with the erasure', async () => {
    const ivy = await t.token({ agent: 'claude', user: 'ivy' });
    const client = await mcpClient(t.url, ivy.token);
    try {
      const stored = toolJson(
        await client.callTool({ name: 'memory_remember', arguments: { content: 'Ivy paints boats.' } }),
      );
      expect(stored.isError).toBe(false);
      const r = await t.call('POST', '/v1/memory/delete_user', {
        token: app,
        body: { confirm: true },
        headers: { 'x-cairn-user': 'ivy' },
      });
      expect(r.body).toMatchObject({ state: 'forgotten', tokens_revoked: 1 });
      await expect(
        client.callTool({ name: 'memory_remember', arguments: { content: 'Ivy is back.' } }),
      ).rejects.toThrow(/401|revoked/);
    } finally {
      await client.close();
    }
    const status = await t.call('GET', '/v1/memory/status', { token: app, headers: { 'x-cairn-user': 'ivy' } });
    expect(status.body.scopes).toEqual([]);
  });

  it('a user with nothing stored is 404 and keeps its tokens (a refused request changes nothing)', async () => {
    const jo = await t.token({ agent: 'claude', user: 'jo' });
    const before = await t.txn();
    const r = await t.call('POST', '/v1/memory/delete_user', { token: jo.token, body: { confirm: true } });
    expect([r.status, r.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(await t.txn()).toBe(before);
    expect((await t.call('GET', '/v1/whoami', { token: jo.token })).status).toBe(200);
  });
});
