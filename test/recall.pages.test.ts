import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_recall pages (an audit: an entity with hundreds of facts could be read past the largest
// `k` only through other verbs): `next` is a cursor bound to the whole request, and the pages,
// concatenated, are the one big reply, whatever is written between them.

type Reply = { status: number; body: Record<string, unknown> };
type Fact = { id: string | null; subject: string; relation: string; object: string };

let t: TestNode;
let alice: string;
let aliceCodex: string;
let bob: string;

beforeAll(async () => {
  t = await startTestNode();
  alice = (await t.token({ agent: 'claude', user: 'alice' })).token;
  aliceCodex = (await t.token({ agent: 'codex', user: 'alice' })).token;
  bob = (await t.token({ agent: 'claude', user: 'bob' })).token;
  const relations = Array.from({ length: 25 }, (_, i) => ({ source: 'Ada Hub', target: `Thing ${i}`, type: 'likes' }));
  expect((await recallAs(alice, 'remember', { facts: { relations } })).status).toBe(200);
  await recallAs(bob, 'remember', { facts: { relations: relations.slice(0, 3) } });
});
afterAll(async () => t.stop());

async function recallAs(token: string, verb: string, body: object): Promise<Reply> {
  const r = await t.call('POST', `/v1/memory/${verb}`, { token, body });
  return { status: r.status, body: r.body as Record<string, unknown> };
}

const said = (r: Reply) => (r.body.facts as Fact[]).map((f) => `${f.id} ${f.subject} ${f.relation} ${f.object}`);

describe('memory_recall pages', () => {
  it('pages of 10 concatenate to the one big reply, each fact once, a write between them shifting nothing', async () => {
    const whole = await recallAs(alice, 'recall', { subject: 'Ada Hub', k: 1000 });
    expect(whole.body).toMatchObject({ omitted: 0, next: null });
    expect(said(whole)).toHaveLength(25);
    const pages: Reply[] = [];
    let cursor: unknown = null;
    do {
      const page = await recallAs(alice, 'recall', {
        subject: 'Ada Hub',
        k: 10,
        ...(cursor === null ? {} : { cursor }),
      });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      pages.push(page);
      cursor = page.body.next;
      if (pages.length === 1) {
        // Newest first: without a pinned read this fact would lead page 2 and push one fact off.
        await recallAs(alice, 'relate', { from: 'Ada Hub', to: 'Thing new', type: 'likes' });
      }
    } while (cursor !== null && pages.length < 10);
    expect(pages.map((p) => said(p).length)).toEqual([10, 10, 5]);
    expect(pages.map((p) => p.body.omitted)).toEqual([15, 5, 0]);
    expect(pages[0]?.body.omitted_hint).toMatch(/`cursor` set to `next`/);
    const joined = pages.flatMap(said);
    expect(new Set(joined).size).toBe(25);
    expect(joined).toEqual(said(whole));
    const fresh = await recallAs(alice, 'recall', { subject: 'Ada Hub', k: 1 });
    expect((fresh.body.facts as Fact[])[0]?.object, 'a new request sees the write').toBe('Thing new');
  });

  it('a cursor used with another subject, k, user or agent, or made up, is 422 naming cursor', async () => {
    const first = await recallAs(alice, 'recall', { subject: 'Ada Hub', k: 2 });
    const cursor = first.body.next;
    expect(typeof cursor).toBe('string');
    const refused: [string, object][] = [
      [alice, { subject: 'Thing 1', k: 2, cursor }],
      [alice, { subject: 'Ada Hub', k: 3, cursor }],
      [alice, { subject: 'Ada Hub', k: 2, valid_at: '2025-01-01', cursor }],
      [bob, { subject: 'Ada Hub', k: 2, cursor }],
      [aliceCodex, { subject: 'Ada Hub', k: 2, cursor }],
      [alice, { subject: 'Ada Hub', k: 2, cursor: 'bm90LWEtY3Vyc29y' }],
    ];
    for (const [token, body] of refused) {
      const r = await recallAs(token, 'recall', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.error, JSON.stringify(body)).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: [{ field: 'cursor' }],
      });
    }
    const second = await recallAs(alice, 'recall', { subject: 'Ada Hub', k: 2, cursor });
    expect(said(second)).toHaveLength(2);
  });
});
