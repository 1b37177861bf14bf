import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Two users, two tokens: no value, count, suggestion or error detail of one reaches the other,
// through any verb. Alice's data uses words that appear nowhere else, so a leak is a substring.

let t: TestNode;
let alice: string;
let bob: string;
let shared: string;
const SECRETS = ['Quillon', 'Vantablack', 'zorblat', 'Marisol Okonkwo-Fenn'];

beforeAll(async () => {
  t = await startTestNode();
  alice = (await t.token({ agent: 'app', user: 'alice' })).token;
  bob = (await t.token({ agent: 'app', user: 'bob' })).token;
  shared = (await t.token({ agent: 'app' })).token;
  const as = { token: alice };
  const r = await t.call('POST', '/v1/memory/remember', {
    ...as,
    body: {
      content: 'Marisol Okonkwo-Fenn founded Quillon. Quillon sells Vantablack zorblat paint.',
      facts: {
        entities: [
          { name: 'Marisol Okonkwo-Fenn', type: 'person' },
          { name: 'Quillon', type: 'company', attributes: { colour: 'Vantablack' } },
        ],
        relations: [{ source: 'Marisol Okonkwo-Fenn', target: 'Quillon', type: 'founded' }],
      },
      source: 'zorblat memo',
    },
  });
  expect(r.status).toBe(200);
  expect(
    (await t.call('POST', '/v1/memory/relate', { ...as, body: { from: 'Quillon', to: 'Vantablack', type: 'sells' } }))
      .status,
  ).toBe(200);
  // A note in a scope of alice's whose name is itself a secret: an empty list or a history miss
  // names the caller's other scopes holding notes (`elsewhere`), never hers.
  const note = { key: 'zorblat', kind: 'user_fact', value: 'Vantablack', scope: 'quillon-notes' };
  expect((await t.call('POST', '/v1/memory/note_write', { ...as, body: note })).status).toBe(200);
});
afterAll(() => t.stop());

/** Alice's words in a reply that bob did not send himself (an echo of his own query is no leak). */
const leaks = (body: unknown, sent: unknown = {}) => {
  const has = (v: unknown, s: string) => JSON.stringify(v).toLowerCase().includes(s.toLowerCase());
  return SECRETS.filter((s) => has(body, s) && !has(sent, s));
};

/** Bob's view, as his own token and as an unrestricted token naming him by header. */
const AS_BOB = [
  ['bob’s token', () => ({ token: bob })],
  ['a shared token with X-Cairn-User: bob', () => ({ token: shared, headers: { 'x-cairn-user': 'bob' } })],
] as const;

describe.each(AS_BOB)('as %s', (_label, who) => {
  it.each([
    ['status', { scope: 'default' }],
    ['recall', { subject: 'Marisol Okonkwo-Fenn' }],
    ['recall', { subject: 'Quillon' }],
    ['recall', { subject: 'Quilon' }],
    ['recall', { attribute: { key: 'colour', value: 'Vantablack' } }],
    ['context', { question: 'Who founded Quillon and what does it sell?' }],
    ['context', { question: 'which companies sell paint?' }],
    ['forget', { subject: 'Quillon' }],
    ['forget', { subject: 'Quilon' }],
    ['forget', { source: 'zorblat memo' }],
    ['forget', { fact: { from: 'Marisol Okonkwo-Fenn', to: 'Quillon', type: 'founded' } }],
    ['export', {}],
    ['note_list', {}],
    ['note_list', { query: 'Vantablack paint' }],
    ['note_list', { taskId: 'zorblat-task', visibility: 'task' }],
    ['history', { key: 'zorblat' }],
    ['history', { subject: 'Quillon' }],
    ['handoff_resume', { taskId: 'zorblat-task' }],
    ['handoff_resume', {}],
    ['forget', { note: { key: 'zorblat' } }],
    ['audit', {}],
  ])('%s %j shows nothing of alice', async (verb, body) => {
    const r = await t.call('POST', `/v1/memory/${verb}`, { ...who(), body });
    expect(leaks(r.body, body)).toEqual([]);
    expect(r.status === 200 || r.status === 404).toBe(true);
    if (verb === 'recall' || verb === 'context') expect(r.body.state).toBe('nothing_stored');
    if (verb === 'export') expect((r.body.records as unknown[]).length).toBe(1);
    if (verb === 'status') {
      const counts = JSON.stringify(r.body.scope ?? {});
      expect(counts).not.toMatch(/[1-9]/);
      expect(r.body.scopes).toEqual([]);
    }
  });

  it('cannot reach alice by naming her', async () => {
    const body = { subject: 'Quillon', user_id: 'alice' };
    const r = await t.call('POST', '/v1/memory/recall', { ...who(), body });
    expect([403, 422]).toContain(r.status);
    expect(leaks(r.body, body)).toEqual([]);
  });
});

it('bob forgetting everything and deleting his user leaves alice intact', async () => {
  expect((await t.call('POST', '/v1/memory/forget', { token: bob, body: { all: true } })).status).toBeLessThan(500);
  // Bob has nothing stored: 404 (never existed) or 200 are both honest; alice must not be touched.
  expect([200, 404]).toContain(
    (await t.call('POST', '/v1/memory/delete_user', { token: bob, body: { confirm: true } })).status,
  );
  const r = await t.call('POST', '/v1/memory/recall', { token: alice, body: { subject: 'Quillon' } });
  expect(r.body.state).toBe('answered');
});

it('a token fixed to bob cannot act as alice by header or body', async () => {
  const h = await t.call('GET', '/v1/whoami', { token: bob, headers: { 'x-cairn-user': 'alice' } });
  expect(h.status).toBe(403);
  const b = await t.call('POST', '/v1/memory/export', { token: bob, body: { user_id: 'alice' } });
  expect(b.status).toBe(403);
  expect(leaks(b.body)).toEqual([]);
});

it('a token limited to scopes sees only those scopes in memory_status', async () => {
  const limited = (await t.token({ agent: 'app', user: 'carol', scopes: ['s1'] })).token;
  const admin = { headers: { 'x-cairn-user': 'carol' } };
  await t.call('POST', '/v1/memory/relate', { ...admin, body: { from: 'A', to: 'B', type: 'knows', scope: 's1' } });
  await t.call('POST', '/v1/memory/relate', {
    ...admin,
    body: { from: 'Quillon', to: 'B', type: 'knows', scope: 's2' },
  });
  const all = await t.call('POST', '/v1/memory/status', { ...admin, body: { scope: 's1' } });
  expect((all.body.scopes as { scope: string }[]).map((s) => s.scope).sort()).toEqual(['s1', 's2']);
  const mine = await t.call('POST', '/v1/memory/status', { token: limited, body: { scope: 's1' } });
  expect((mine.body.scopes as { scope: string }[]).map((s) => s.scope)).toEqual(['s1']);
});
