import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The handoffs addressed to an agent, as the agents of a team rely on them (found by an audit of
// notes and handoffs with several agents): every one can be reached page by page, and a capsule
// addressed to an agent no token is bound to is stored but says so.

let t: TestNode;
let claude: string;
let codex: string;

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ana' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ana' })).token;
});
afterAll(() => t.stop());

const post = (verb: string, body: object, token: string) => t.call('POST', `/v1/memory/${verb}`, { body, token });

it('handoff_resume without taskId pages every capsule addressed to the caller, newest first', async () => {
  const made: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await post('handoff_create', { taskId: `P-${i}`, summary: `step ${i}`, to: 'codex' }, claude);
    made.unshift(String(r.body.id));
  }
  const seen: string[] = [];
  let page = await post('handoff_resume', { limit: 2 }, codex);
  while (true) {
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    seen.push(...(page.body.handoffs as { id: string }[]).map((h) => h.id));
    if (page.body.nextCursor === null) break;
    page = await post('handoff_resume', { limit: 2, cursor: page.body.nextCursor }, codex);
  }
  expect(seen).toEqual(made);
  // The cursor is codex's listing: with a task, or as another agent, it is refused naming it.
  const cursor = (await post('handoff_resume', { limit: 1 }, codex)).body.nextCursor;
  for (const [body, token] of [
    [{ taskId: 'P-1', cursor }, codex],
    [{ cursor }, claude],
  ] as const) {
    const r = await post('handoff_resume', body, token);
    expect(r.status).toBe(422);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'cursor' })]);
  }
});

it("a `to` no token is bound to is stored with a warning naming `to` and the tenant's near agents", async () => {
  // Another tenant's agent is never suggested, however near.
  await t.token({ agent: 'claudf', user: 'ana', tenant: 'acme' });
  await t.token({ agent: 'Claud', user: 'ana' });
  const typo = await post('handoff_create', { taskId: 'W-1', summary: 'for claude', to: 'claud' }, codex);
  expect(typo.status, JSON.stringify(typo.body)).toBe(200);
  expect(typo.body.to).toBe('claud');
  expect(typo.body.warnings).toEqual([
    {
      field: 'to',
      message: expect.stringMatching(/"claud".*did you mean "Claud", "claude"\?$/),
      near: ['Claud', 'claude'],
    },
  ]);
  expect(JSON.stringify(typo.body)).not.toContain('claudf');
  // Stored as sent: a token made later for that agent finds it.
  const later = (await t.token({ agent: 'claud', user: 'ana' })).token;
  const found = await post('handoff_resume', {}, later);
  expect((found.body.handoffs as { taskId: string }[]).map((h) => h.taskId)).toEqual(['W-1']);
  // A known agent, or no `to`, has no warning; a name near nothing has an empty `near`.
  for (const to of ['claude', 'claud', undefined]) {
    const r = await post('handoff_create', { taskId: 'W-2', summary: 's', ...(to === undefined ? {} : { to }) }, codex);
    expect(r.body.warnings).toBeUndefined();
  }
  const far = await post('handoff_create', { taskId: 'W-3', summary: 's', to: 'zeta-reviewer' }, codex);
  expect(far.body.warnings).toEqual([{ field: 'to', message: expect.stringContaining('"zeta-reviewer"'), near: [] }]);
});

// Found by an audit: `near`, and whether a warning came at all, named the agents of every user's
// tokens, so any token could probe which agents another user has and whether their tokens live.
it("a `to` warning knows only the agents of tokens that may act for the caller's user", async () => {
  await t.token({ agent: 'ladmin', user: 'alice', role: 'admin' });
  await t.token({ agent: 'auditor', user: 'alice' });
  await t.token({ agent: 'ladmix' }); // bound to no user: it may act for bob (as may the node's admin)
  const bob = (await t.token({ agent: 'bobbot', user: 'bob' })).token;
  const typo = await post('handoff_create', { taskId: 'B-1', summary: 's', to: 'ladmi' }, bob);
  expect(typo.status, JSON.stringify(typo.body)).toBe(200);
  expect(typo.body.warnings).toEqual([{ field: 'to', message: expect.any(String), near: ['ladmix', 'admin'] }]);
  expect(JSON.stringify(typo.body)).not.toContain('ladmin');
  // An agent only alice's tokens name is no agent for bob: warned, so its existence is not told.
  const probe = await post('handoff_create', { taskId: 'B-2', summary: 's', to: 'auditor' }, bob);
  expect(probe.body.warnings).toEqual([{ field: 'to', message: expect.stringContaining('"auditor"'), near: [] }]);
  // Alice's own agents are hers to name.
  const alice = (await t.token({ agent: 'alicebot', user: 'alice' })).token;
  const hers = await post('handoff_create', { taskId: 'A-1', summary: 's', to: 'ladmi' }, alice);
  expect(hers.body.warnings).toEqual([
    { field: 'to', message: expect.any(String), near: ['ladmin', 'ladmix', 'admin'] },
  ]);
  expect((await post('handoff_create', { taskId: 'A-2', summary: 's', to: 'auditor' }, alice)).body.warnings).toBe(
    undefined,
  );
});

// Found by a review: `handoff_resume {}` lists the caller's scope only, so an agent whose handoffs
// were left in another scope of its user read an empty list as "nothing for me". The empty list
// names those scopes with counts; never another user's, nor a scope the caller's token may not use.
it('an empty list names the other scopes of the user and token where handoffs addressed to the caller wait', async () => {
  const reviewer = (await t.token({ agent: 'reviewer', user: 'ana' })).token;
  const limited = (await t.token({ agent: 'reviewer', user: 'ana', scopes: ['default', 'review'] })).token;
  const bosCodex = (await t.token({ agent: 'codex', user: 'bo' })).token;
  const leave = async (scope: string, taskId: string, token = codex) => {
    const r = await post('handoff_create', { scope, taskId, summary: 'look at it', to: 'reviewer' }, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const before = await post('handoff_resume', {}, reviewer);
  expect(before.body).toEqual({ state: 'listed', handoffs: [], nextCursor: null });
  await leave('review', 'R-1');
  await leave('review', 'R-2');
  await leave('hidden', 'H-1');
  await leave('bo-scope', 'B-1', bosCodex);

  const listed = await post('handoff_resume', {}, reviewer);
  expect(listed.status, JSON.stringify(listed.body)).toBe(200);
  expect(listed.body).toMatchObject({ state: 'listed', handoffs: [], nextCursor: null });
  expect(listed.body.elsewhere).toEqual({
    scopes: [
      { scope: 'review', handoffs: 2 },
      { scope: 'hidden', handoffs: 1 },
    ],
    hint: expect.stringContaining('"review" (2), "hidden" (1)'),
  });
  expect(JSON.stringify(listed.body)).not.toContain('bo-scope');
  const narrow = await post('handoff_resume', {}, limited);
  expect(narrow.body.elsewhere).toEqual({
    scopes: [{ scope: 'review', handoffs: 2 }],
    hint: expect.stringContaining('send `scope`'),
  });
  expect(JSON.stringify(narrow.body)).not.toContain('hidden');
  // Asked where they wait, they are listed, and nothing points elsewhere.
  const there = await post('handoff_resume', { scope: 'review' }, limited);
  expect((there.body.handoffs as { taskId: string }[]).map((h) => h.taskId)).toEqual(['R-2', 'R-1']);
  expect(there.body.elsewhere).toBeUndefined();
  // The engine's list of readable scopes is the node's to give, never a client's.
  const forged = await post('handoff_resume', { readableScopes: ['hidden'] }, limited);
  expect(forged.status).toBe(422);
});
