import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// A request to no route names the verb route it likely meant (found by a new-user audit, which
// got only "no route POST /v1/memory/recal"): a misspelt verb, the MCP tool's name, a path
// without `/v1/memory`. Nothing runs, and a path like no verb is told only that there is no route.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

it.each([
  ['/v1/memory/recal', '/v1/memory/recall'],
  ['/v1/memory/memory_recall', '/v1/memory/recall'],
  ['/v1/memory/notes_write', '/v1/memory/note_write'],
  ['/memory/recall', '/v1/memory/recall'],
  ['/v1/remember', '/v1/memory/remember'],
])('POST %s is 404 naming %s', async (path, route) => {
  const before = await t.txn();
  const r = await t.call('POST', path, { body: { subject: 'x' } });
  expect(r.status).toBe(404);
  expect(r.body.error).toEqual({
    code: 'NOT_FOUND',
    message: `no route POST ${path} (did you mean ${route}?)`,
    details: [{ did_you_mean: route }],
  });
  expect(await t.txn()).toBe(before);
});

it('a path like no verb is only "no route", and so is one without a token', async () => {
  const r = await t.call('GET', '/v1/frobnicate/x?y=1', { token: null });
  expect(r.status).toBe(404);
  expect(r.body.error).toEqual({ code: 'NOT_FOUND', message: 'no route GET /v1/frobnicate/x', details: [] });
});
