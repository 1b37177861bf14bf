import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Tokens } from '../ts/auth/tokens.js';
import { runToken } from '../ts/cli/token.js';
import { startTestNode, type TestNode } from './node.js';

// Admin tokens limited to a user and/or scopes, and token allow-lists that would widen: the
// store-wide admin routes need an admin token with no limit, and an empty `scopes` list is refused.

let t: TestNode;
let userAdmin: string;
let scopeAdmin: string;
let bothAdmin: string;
let victim: string;

/** Every admin route that is not bound to one user and scope (ts/server: routes.ts, admin-database.ts). */
const STORE_WIDE = (): { method: string; path: string; body?: unknown }[] => [
  { method: 'GET', path: '/v1/admin/tokens' },
  { method: 'POST', path: '/v1/admin/tokens', body: { agent: 'escalated', role: 'admin' } },
  { method: 'POST', path: '/v1/admin/tokens', body: { agent: 'inside', user: 'u1', scopes: ['s1'] } },
  { method: 'DELETE', path: `/v1/admin/tokens/${victim}` },
  { method: 'GET', path: '/v1/admin/check' },
  { method: 'POST', path: '/v1/admin/database/backup', body: { dest: `${t.dataDir}-backup` } },
  { method: 'POST', path: '/v1/admin/database/compact', body: {} },
];

beforeAll(async () => {
  t = await startTestNode();
  userAdmin = (await t.token({ agent: 'uadm', role: 'admin', user: 'u1' })).token;
  scopeAdmin = (await t.token({ agent: 'sadm', role: 'admin', scopes: ['s1'] })).token;
  bothAdmin = (await t.token({ agent: 'ladm', role: 'admin', user: 'u1', scopes: ['s1'] })).token;
  victim = (await t.token({ agent: 'other', user: 'u9' })).id;
});
afterAll(() => t.stop());

describe('an empty scopes list', () => {
  it('is refused by POST /v1/admin/tokens (422 naming scopes), nothing made', async () => {
    const before = await t.txn();
    const r = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'limited', scopes: [] } });
    expect([r.status, r.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'scopes' })]);
    expect(await t.txn()).toBe(before);
    const list = await t.call('GET', '/v1/admin/tokens');
    expect((list.body.tokens as { agent: string }[]).map((x) => x.agent)).not.toContain('limited');
  });
  it('is refused by the token store itself, never widened to every scope', async () => {
    await expect(new Tokens(t.node.store).create({ agent: 'limited', scopes: [] })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: 'scopes' })],
    });
  });
  it('is refused by `cairn token create` (naming --scope)', async () => {
    await expect(
      runToken('create', { dataDir: t.dataDir, json: true, agent: 'limited', scopes: [] }),
    ).rejects.toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('--scope') });
  });
});

describe('store-wide admin routes', () => {
  it.each([
    ['a user', () => userAdmin, 'user "u1"'],
    ['scopes', () => scopeAdmin, 'scopes s1'],
    ['a user and scopes', () => bothAdmin, 'user "u1" and scopes s1'],
  ])('refuse an admin token limited to %s (403 naming why), changing nothing', async (_l, token, limit) => {
    for (const route of STORE_WIDE()) {
      const before = await t.txn();
      const r = await t.call(route.method, route.path, { token: token(), body: route.body });
      expect([route.path, r.status, r.body.error?.code]).toEqual([route.path, 403, 'FORBIDDEN']);
      expect(r.body.error?.message).toContain(limit);
      expect(r.body.error?.details).toEqual([
        { field: 'Authorization', message: expect.stringContaining('no user or scope limit') },
      ]);
      expect(await t.txn()).toBe(before);
    }
    // The other user's token still works: it was not revoked.
    const list = await t.call('GET', '/v1/admin/tokens');
    const tokens = list.body.tokens as { id: string; agent: string; revokedAt?: string }[];
    expect(tokens.find((x) => x.id === victim)?.revokedAt).toBeUndefined();
    expect(tokens.map((x) => x.agent)).not.toContain('escalated');
  });
  it('still serve an unlimited admin token', async () => {
    expect((await t.call('GET', '/v1/admin/tokens')).status).toBe(200);
    expect((await t.call('GET', '/v1/admin/check')).status).toBe(200);
    expect((await t.call('POST', '/v1/admin/database/compact', { body: {} })).status).toBe(200);
  });
  it('leave a limited admin its user- and scope-bound routes, within its limits', async () => {
    const ok = await t.call('POST', '/v1/admin/agents/someone/memory/note_list', {
      token: bothAdmin,
      body: { scope: 's1' },
    });
    expect(ok.status).toBe(200);
    const out = await t.call('POST', '/v1/admin/agents/someone/memory/note_list', {
      token: bothAdmin,
      body: { scope: 's2' },
    });
    expect([out.status, out.body.error?.details]).toEqual([403, [expect.objectContaining({ field: 'scope' })]]);
  });
  it("name the import route's refused user as the request sent it: the query parameter user", async () => {
    const lines = `${JSON.stringify({ kind: 'entity', id: '1', name: 'Ann' })}\n`;
    const ndjson = { 'content-type': 'application/x-ndjson' };
    const before = await t.txn();
    const other = await t.call('POST', '/v1/admin/import?user=bob&scope=s1', {
      token: bothAdmin,
      body: lines,
      headers: ndjson,
    });
    expect([other.status, other.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(other.body.error?.message).toMatch(/^user: /);
    expect(other.body.error?.details).toEqual([expect.objectContaining({ field: 'user' })]);
    const header = { ...ndjson, 'x-cairn-user': 'u1' };
    const differs = await t.call('POST', '/v1/admin/import?user=bob&scope=s1', { body: lines, headers: header });
    expect([differs.status, differs.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'user' })]]);
    expect(await t.txn()).toBe(before);
  });
});
