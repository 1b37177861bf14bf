import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Who did what: an operator reads any agent's write events (`audit` as that agent), for a user and
// scope, as the agent itself would; tokens other than an admin's cannot, and a limited admin only
// within its limits.

let t: TestNode;
let ciBot: string;

type Event = { agent: string; family: string; op: string };

beforeAll(async () => {
  t = await startTestNode();
  ciBot = (await t.token({ agent: 'ci-bot', user: 'team' })).token;
  const claude = (await t.token({ agent: 'claude', user: 'team' })).token;
  const as = (token: string, verb: string, body: unknown) =>
    t.call('POST', `/v1/memory/${verb}`, { token, body }).then((r) => expect(r.status).toBe(200));
  await as(ciBot, 'note_write', { key: 'build', value: { green: false }, kind: 'task_state' });
  await as(ciBot, 'relate', { from: 'release-7', to: 'flaky-test', type: 'blocked_by' });
  await as(claude, 'note_write', { key: 'plan', value: 'ship friday', kind: 'decision' });
});
afterAll(() => t.stop());

const team = { 'x-cairn-user': 'team' };

it("an admin reads another agent's write events, and only that agent's", async () => {
  const r = await t.call('POST', '/v1/admin/agents/ci-bot/memory/audit', { body: {}, headers: team });
  expect(r.status).toBe(200);
  const events = r.body.events as Event[];
  expect(events.map((e) => [e.agent, e.family, e.op])).toEqual([
    ['ci-bot', 'note', 'create'],
    ['ci-bot', 'entity', 'create'],
    ['ci-bot', 'entity', 'create'],
    ['ci-bot', 'fact', 'assert'],
  ]);
  // The agent's own audit says the same.
  const own = await t.call('POST', '/v1/memory/audit', { token: ciBot, body: {} });
  expect(own.body.events).toEqual(r.body.events);
});

it("is refused to an agent's token (403 naming Authorization) and to a limited admin outside its user", async () => {
  const r = await t.call('POST', '/v1/admin/agents/claude/memory/audit', { token: ciBot, body: {}, headers: team });
  expect([r.status, r.body.error?.code]).toEqual([403, 'FORBIDDEN']);
  const limited = (await t.token({ agent: 'lead', role: 'admin', user: 'other' })).token;
  const out = await t.call('POST', '/v1/admin/agents/ci-bot/memory/audit', {
    token: limited,
    body: {},
    headers: team,
  });
  expect([out.status, out.body.error?.details]).toEqual([403, [expect.objectContaining({ field: 'X-Cairn-User' })]]);
});
