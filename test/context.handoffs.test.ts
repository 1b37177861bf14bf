import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// A handoff capsule in memory_context: agent A hands off task AUTH-12; agent B asks memory_context
// about it with that taskId and gets the capsule as a ranked, cited item, grounded when it covers
// the question. Before, only notes competed: B was told `nothing_stored` for "what is left on
// AUTH-12?" though memory_handoff_resume held the answer. Visibility is resume's: without the
// taskId (and not addressed to B) it does not appear, an expired capsule never does, another
// user never sees it.

let t: TestNode;
let claude: string;
let codex: string;
let gemini: string;
let stranger: string;
let capsuleId: string;
/** A moment before the AUTH-12 capsule was made. */
let beforeCapsule: string;

type Item = {
  kind: string;
  text: string;
  uncovered?: string[];
  channels: string[];
  citation: { source: { kind: string; name: string; ingested_at: string }; span: null };
  handoff?: { id: string; taskId: string; agent: string; createdAt: string; status: string | null };
  fused?: { list: string };
};
type Context = {
  state: string;
  grounding: { verdict: string; uncovered: string[] };
  items: Item[];
  context?: string;
  omitted?: { kind: string; id: string | null; reason: string }[];
};

const post = async (token: string, verb: string, body: object) => {
  const r = await t.call('POST', `/v1/memory/${verb}`, { token, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Record<string, unknown>;
};
const context = async (token: string, body: object) => (await post(token, 'context', body)) as unknown as Context;
const handoffsOf = (c: Context) => c.items.filter((i) => i.kind === 'handoff');

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ana' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ana' })).token;
  gemini = (await t.token({ agent: 'gemini', user: 'ana' })).token;
  stranger = (await t.token({ agent: 'codex', user: 'bo' })).token;
  beforeCapsule = new Date(Date.now() - 1000).toISOString();
  const made = await post(claude, 'handoff_create', {
    taskId: 'AUTH-12',
    summary: 'Token rotation is half done: the issuer signs with the new key.',
    status: 'in_progress',
    decisions: ['The token format is PASETO v4, not JWT'],
    nextSteps: ['rotate the refresh tokens', 'retire the old signing key'],
    blockers: ['security review of the key store'],
    artifacts: ['PR #412'],
  });
  capsuleId = String(made.id);
});
afterAll(() => t.stop());

it('with the taskId, the official MCP client gets the task’s capsule as a grounded, cited item', async () => {
  const b = await mcpClient(t.url, codex);
  try {
    const r = toolJson(
      await b.callTool({
        name: 'memory_context',
        arguments: { question: 'What is left on AUTH-12?', taskId: 'AUTH-12' },
      }),
    );
    expect(r.isError).toBe(false);
    const c = r.body as unknown as Context;
    expect(c.state).toBe('answered');
    expect(c.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
    const [item] = handoffsOf(c);
    expect(item).toMatchObject({
      kind: 'handoff',
      uncovered: [],
      channels: ['handoff_task'],
      citation: { source: { kind: 'asserted', name: 'handoff on AUTH-12 by claude' }, span: null },
      handoff: { id: capsuleId, taskId: 'AUTH-12', agent: 'claude', status: 'in_progress' },
      fused: { list: 'handoffs' },
    });
    expect(item?.citation.source.ingested_at).toBe(item?.handoff?.createdAt);
    for (const said of ['half done', 'PASETO v4', 'rotate the refresh tokens', 'security review', 'PR #412']) {
      expect(item?.text).toContain(said);
    }
  } finally {
    await b.close();
  }
});

it('grounds a question its decisions answer, and leaves it out of a question it does not cover', async () => {
  const decided = await context(codex, { question: 'What did we decide about the token format?', taskId: 'AUTH-12' });
  expect(decided.grounding.verdict).toBe('grounded');
  expect(handoffsOf(decided).map((i) => i.handoff?.id)).toEqual([capsuleId]);
  // The task named, a question its sections answer matches by them alone.
  const bare = await context(codex, { question: 'What did we decide?', taskId: 'AUTH-12' });
  expect(bare.grounding.verdict).toBe('grounded');
  expect(handoffsOf(bare).map((i) => i.handoff?.id)).toEqual([capsuleId]);
  const unrelated = await context(codex, { question: 'Who founded the lighthouse?', taskId: 'AUTH-12' });
  expect(unrelated.state).toBe('nothing_stored');
  expect(handoffsOf(unrelated)).toEqual([]);
});

it('without the taskId, and not addressed to the caller, it does not appear', async () => {
  const c = await context(codex, { question: 'What is left on AUTH-12?' });
  expect(c.state).toBe('nothing_stored');
  expect(JSON.stringify(c)).not.toContain('PASETO');
});

it('a capsule addressed to the caller appears without a taskId; to no one else', async () => {
  await post(claude, 'handoff_create', {
    taskId: 'DOCS-3',
    summary: 'The API guide needs its auth chapter rewritten.',
    nextSteps: ['rewrite the auth chapter'],
    to: 'gemini',
  });
  const mine = await context(gemini, { question: 'What is left on the API guide?' });
  expect(handoffsOf(mine)).toMatchObject([
    { channels: ['handoff_addressed'], handoff: { taskId: 'DOCS-3', agent: 'claude' } },
  ]);
  expect(mine.state).toBe('answered');
  const theirs = await context(codex, { question: 'What is left on the API guide?' });
  expect(handoffsOf(theirs)).toEqual([]);
});

it('an expired capsule never appears, with or without its taskId', async () => {
  const expiresAt = new Date(Date.now() + 1200).toISOString();
  await post(claude, 'handoff_create', {
    taskId: 'TMP-9',
    summary: 'The cache warmer is short-lived.',
    nextSteps: ['drop the cache warmer'],
    to: 'codex',
    expiresAt,
  });
  const before = await context(codex, { question: 'What is left on TMP-9?', taskId: 'TMP-9' });
  expect(handoffsOf(before)).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 1500));
  for (const body of [{ taskId: 'TMP-9' }, {}]) {
    const c = await context(codex, { question: 'What is left on TMP-9?', ...body });
    expect(handoffsOf(c)).toEqual([]);
    expect(JSON.stringify(c)).not.toContain('cache warmer');
  }
});

it('another user never sees it, even naming the task', async () => {
  const c = await context(stranger, { question: 'What is left on AUTH-12?', taskId: 'AUTH-12' });
  expect(c.state).toBe('nothing_stored');
  expect(JSON.stringify(c)).not.toContain('PASETO');
});

it('a context pack counts the capsule, and omits it whole when it does not fit', async () => {
  const ask = { question: 'What is left on AUTH-12?', taskId: 'AUTH-12' };
  const packed = await context(codex, { ...ask, tokenBudget: 400 });
  expect(handoffsOf(packed)).toHaveLength(1);
  expect(packed.context).toContain('retire the old signing key');
  expect(packed.context).toContain('handoff on AUTH-12 by claude');
  const tight = await context(codex, { ...ask, tokenBudget: 40 });
  expect(handoffsOf(tight)).toEqual([]);
  expect(tight.omitted).toEqual([expect.objectContaining({ kind: 'handoff', id: capsuleId, reason: 'token_budget' })]);
  expect(tight.context).not.toContain('signing key');
  // The verdict speaks of the pack: the capsule left out grounds nothing.
  expect(tight.grounding.verdict).not.toBe('grounded');
});

it('a read as of a time before the capsule was made does not show it', async () => {
  const ask = { question: 'What is left on AUTH-12?', taskId: 'AUTH-12' };
  const then = await context(codex, { ...ask, as_of: beforeCapsule });
  expect(handoffsOf(then)).toEqual([]);
  const now = await context(codex, { ...ask, as_of: new Date(Date.now() + 1000).toISOString() });
  expect(handoffsOf(now).map((i) => i.handoff?.id)).toEqual([capsuleId]);
});

it('an addressed capsule a newer one of its task replaced is stale: not shown; the task’s newest is, by taskId', async () => {
  await post(claude, 'handoff_create', {
    taskId: 'OPS-1',
    summary: 'Old plan for the billing cutover.',
    nextSteps: ['migrate the billing tables'],
    to: 'gemini',
  });
  await post(claude, 'handoff_create', {
    taskId: 'OPS-1',
    summary: 'New plan for the billing cutover.',
    nextSteps: ['freeze the billing tables'],
  });
  // Nor is DOCS-3, addressed to gemini too: its next steps say what is left, but not on this.
  const addressed = await context(gemini, { question: 'What is left on the billing cutover?' });
  expect(handoffsOf(addressed)).toEqual([]);
  expect(JSON.stringify(addressed)).not.toContain('plan for the billing');
  const byTask = await context(gemini, { question: 'What is left on the billing cutover?', taskId: 'OPS-1' });
  expect(handoffsOf(byTask).map((i) => i.text)).toEqual([expect.stringContaining('New plan')]);
});
