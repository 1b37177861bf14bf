import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN, startTestNode, type TestNode } from './node.js';

// Every protected route × every way a token can be wrong; and the routes that need no token.

let t: TestNode;
let agent: string;
let revoked: string;
let alice: string;
let scoped: string;

/** A valid body per verb, so a refusal comes from auth, not from validation. */
const ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: 'GET', path: '/v1/whoami' },
  { method: 'GET', path: '/v1/memory/status' },
  { method: 'POST', path: '/v1/memory/status', body: {} },
  { method: 'POST', path: '/v1/memory/remember', body: { content: 'Priya Raman works at Acme.' } },
  { method: 'POST', path: '/v1/memory/relate', body: { from: 'Priya', to: 'Acme', type: 'works_at' } },
  { method: 'POST', path: '/v1/memory/recall', body: { subject: 'Priya' } },
  { method: 'POST', path: '/v1/memory/context', body: { question: 'Where does Priya work?' } },
  { method: 'POST', path: '/v1/memory/forget', body: { subject: 'Priya' } },
  { method: 'POST', path: '/v1/memory/export', body: {} },
  { method: 'POST', path: '/v1/memory/import', body: { records: [] } },
  { method: 'POST', path: '/v1/memory/delete_user', body: { confirm: true } },
  { method: 'POST', path: '/v1/memory/audit', body: {} },
  { method: 'POST', path: '/v1/memory/note_write', body: { key: 'k', value: 1, kind: 'user_fact' } },
  { method: 'POST', path: '/v1/memory/note_list', body: {} },
  { method: 'POST', path: '/v1/memory/history', body: { key: 'k' } },
  { method: 'POST', path: '/v1/memory/handoff_create', body: { taskId: 't', summary: 's' } },
  { method: 'POST', path: '/v1/memory/handoff_resume', body: { taskId: 't' } },
  { method: 'POST', path: '/v1/mcp', body: { jsonrpc: '2.0', id: 1, method: 'ping' } },
  { method: 'GET', path: '/v1/admin/tokens' },
  { method: 'POST', path: '/v1/admin/tokens', body: { agent: 'x' } },
  { method: 'DELETE', path: '/v1/admin/tokens/000000000000' },
];
const VERB_ROUTES = ROUTES.filter((r) => r.path.startsWith('/v1/memory/'));

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
  const r = await t.token({ agent: 'old' });
  revoked = r.token;
  expect((await t.call('DELETE', `/v1/admin/tokens/${r.id}`)).status).toBe(200);
  alice = (await t.token({ agent: 'app', user: 'alice' })).token;
  scoped = (await t.token({ agent: 'codex', scopes: ['project-x'] })).token;
});
afterAll(() => t.stop());

describe.each(ROUTES)('$method $path', (route) => {
  it.each([
    ['no token', null],
    ['a malformed token', 'not-a-token'],
    ['an unknown token', 'cairn_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['a revoked token', 'REVOKED'],
  ])('refuses %s with 401 and the bearer challenge, changing nothing', async (_label, token) => {
    const before = await t.txn();
    const r = await t.call(route.method, route.path, {
      token: token === 'REVOKED' ? revoked : token,
      body: route.body,
    });
    expect(r.status).toBe(401);
    expect(r.body.error?.code).toBe('UNAUTHENTICATED');
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="cairn", error="invalid_token"');
    expect(await t.txn()).toBe(before);
  });
});

describe.each(VERB_ROUTES)('$method $path', (route) => {
  it('refuses a user the token is not fixed to (403)', async () => {
    const before = await t.txn();
    const r = await t.call(route.method, route.path, {
      token: alice,
      body: route.body,
      headers: { 'x-cairn-user': 'bob' },
    });
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('FORBIDDEN');
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'X-Cairn-User' })]);
    expect(await t.txn()).toBe(before);
  });
  it('refuses a scope outside the token’s scopes (403)', async () => {
    const before = await t.txn();
    const r = await t.call(route.method, route.path, {
      token: scoped,
      body: route.body,
      headers: { 'x-cairn-scope': 'other' },
    });
    expect(r.status).toBe(403);
    expect(r.body.error?.code).toBe('FORBIDDEN');
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'X-Cairn-Scope' })]);
    expect(await t.txn()).toBe(before);
  });
});

describe('authorisation comes before the shape of the body', () => {
  it('a user the token may not act for is 403 naming user_id, even beside an unknown field', async () => {
    const bob = (await t.token({ agent: 'app', user: 'bob' })).token;
    const before = await t.txn();
    const r = await t.call('POST', '/v1/memory/note_write', {
      token: bob,
      body: { key: 'k', value: 1, kind: 'user_fact', bogus: 1, user_id: 'alice' },
    });
    expect([r.status, r.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'user_id' })]);
    expect(await t.txn()).toBe(before);
  });
  it('a scope the token may not use is 403 naming scope, even with a malformed body', async () => {
    const r = await t.call('POST', '/v1/memory/recall', { token: scoped, body: { scope: 'other', subject: 7 } });
    expect([r.status, r.body.error?.details]).toEqual([403, [expect.objectContaining({ field: 'scope' })]]);
  });
  it('delete_user with a token limited to scopes is 403 whatever the body says', async () => {
    for (const body of [{}, { confirm: false }, { bogus: 1 }]) {
      const r = await t.call('POST', '/v1/memory/delete_user', { token: scoped, body });
      expect([r.status, r.body.error?.details]).toEqual([403, [expect.objectContaining({ field: 'scope' })]]);
    }
  });
  it('a token allowed the user and scope still gets the shape error (422)', async () => {
    const r = await t.call('POST', '/v1/memory/note_write', {
      token: alice,
      body: { key: 'k', value: 1, kind: 'user_fact', bogus: 1, user_id: 'alice' },
    });
    expect([r.status, r.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'bogus' })]]);
  });
});

describe('a token limited to scopes', () => {
  it('works in its first scope when a request names none (whoami, status)', async () => {
    const who = await t.call('GET', '/v1/whoami', { token: scoped });
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({ scope: 'project-x' });
    const status = await t.call('GET', '/v1/memory/status', { token: scoped });
    expect(status.status).toBe(200);
  });

  it('GET status reads its fields from the query string, as strictly as a body', async () => {
    const mine = await t.call('GET', '/v1/memory/status?scope=project-x', { token: scoped });
    expect(mine.status).toBe(200);
    expect(mine.body.ontology).toBeDefined();
    expect((await t.call('GET', '/v1/memory/status?scope=other', { token: scoped })).status).toBe(403);
    const bogus = await t.call('GET', '/v1/memory/status?bogus=1', { token: scoped });
    expect([bogus.status, bogus.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'bogus' })]]);
  });
});

describe('admin routes', () => {
  it.each(ROUTES.filter((r) => r.path.startsWith('/v1/admin')))(
    '$method $path needs an admin token (403 for an agent token)',
    async (route) => {
      const r = await t.call(route.method, route.path, { token: agent, body: route.body });
      expect(r.status).toBe(403);
      expect(r.body.error?.code).toBe('FORBIDDEN');
    },
  );
  it('creates, lists and revokes tokens; never shows a token or its hash in the list', async () => {
    const made = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'cursor', user: 'u1' } });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ agent: 'cursor', user: 'u1', role: 'agent' });
    const token = made.body.token as string;
    expect(token).toMatch(/^cairn_[A-Za-z0-9_-]{43}$/);
    expect((await t.call('GET', '/v1/whoami', { token })).body).toMatchObject({ agent: 'cursor', user: 'u1' });
    const list = await t.call('GET', '/v1/admin/tokens');
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(JSON.stringify(list.body)).not.toContain('hash');
    const gone = await t.call('DELETE', `/v1/admin/tokens/${made.body.id as string}`);
    expect(gone.status).toBe(200);
    expect((await t.call('GET', '/v1/whoami', { token })).status).toBe(401);
    expect((await t.call('DELETE', '/v1/admin/tokens/ffffffffffff')).status).toBe(404);
  });
  it('refuses a bad agent name naming the field', async () => {
    const r = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'has space' } });
    expect(r.status).toBe(422);
    expect(r.body.error?.details).toContainEqual(expect.objectContaining({ field: 'agent' }));
  });
});

describe('identity', () => {
  it('takes the agent from the token and the user from X-Cairn-User, else the token, else default', async () => {
    expect((await t.call('GET', '/v1/whoami', { token: agent })).body).toMatchObject({
      tenant: 'local',
      agent: 'claude',
      user: 'default',
      scope: 'default',
    });
    const h = await t.call('GET', '/v1/whoami', {
      token: agent,
      headers: { 'x-cairn-user': 'zoe', 'x-cairn-scope': 's1' },
    });
    expect(h.body).toMatchObject({ user: 'zoe', scope: 's1' });
    expect((await t.call('GET', '/v1/whoami', { token: alice })).body).toMatchObject({ user: 'alice' });
  });
  it('refuses a body user_id that differs from X-Cairn-User (422 naming user_id)', async () => {
    const r = await t.call('POST', '/v1/memory/recall', {
      token: agent,
      body: { subject: 'x', user_id: 'mallory' },
      headers: { 'x-cairn-user': 'zoe' },
    });
    expect(r.status).toBe(422);
    expect(r.body.error?.details).toContainEqual(expect.objectContaining({ field: 'user_id' }));
  });
  it('refuses a body user_id outside the token’s fixed user (403)', async () => {
    const r = await t.call('POST', '/v1/memory/recall', { token: alice, body: { subject: 'x', user_id: 'bob' } });
    expect(r.status).toBe(403);
  });
  it('refuses a malformed identity header naming it', async () => {
    const r = await t.call('GET', '/v1/whoami', { token: agent, headers: { 'x-cairn-scope': 'a:b' } });
    expect(r.status).toBe(422);
    expect(r.body.error?.message).toContain('X-Cairn-Scope');
  });
});

describe('routes without a token', () => {
  it('serves /health, the OpenAPI document and the docs page', async () => {
    expect((await t.call('GET', '/health', { token: null })).body).toMatchObject({ status: 'ok', profile: 'lite' });
    const doc = await t.call('GET', '/v1/openapi.json', { token: null });
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths as object)).toContain('/v1/memory/recall');
    const page = await fetch(`${t.url}/docs`);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).not.toMatch(/https?:\/\/(?!127)/);
  });
  it('answers GET /v1/mcp with 405 Allow: POST, DELETE before auth', async () => {
    const r = await t.call('GET', '/v1/mcp', { token: null });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST, DELETE');
    expect(r.body.error?.code).toBe('METHOD_NOT_ALLOWED');
  });
  it.each([
    '/.well-known/oauth-authorization-server',
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/v1/mcp',
    '/.well-known/openid-configuration',
    '/register',
  ])('answers the OAuth discovery path %s with a JSON 404', async (path) => {
    const r = await t.call('GET', path, { token: null });
    expect(r.status).toBe(404);
    expect(r.body.error?.code).toBe('NOT_FOUND');
    expect(r.headers.get('www-authenticate')).toBeNull();
  });
});

describe('DNS rebinding protection', () => {
  it('refuses a foreign Host or Origin and accepts localhost', async () => {
    const { request } = await import('node:http');
    const get = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: t.port, path: '/health', headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get({ host: 'evil.example:80' })).toBe(403);
    expect(await get({ host: `localhost:${t.port}`, origin: 'http://evil.example' })).toBe(403);
    expect(await get({ host: `localhost:${t.port}` })).toBe(200);
    expect(await get({ host: `127.0.0.1:${t.port}`, origin: `http://localhost:${t.port}` })).toBe(200);
  });
});

it('the admin token is the seeded one', async () => {
  expect((await t.call('GET', '/v1/whoami', { token: ADMIN })).body).toMatchObject({ role: 'admin' });
});
