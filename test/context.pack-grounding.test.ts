import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContextReply, QueryReply } from '../ts/protocol/replies-knowledge.js';
import { startTestNode, type TestNode } from './node.js';

// The grounding verdict speaks of the items the caller gets (found by an audit): a context pack
// whose budget left out the one passage covering the question said `grounded`, and memory_query
// `sufficient`, while the pack held only a fact about something else. Each item carries the
// question's words it leaves uncovered, and the verdict is judged over the items kept.

let t: TestNode;
const QUESTION = 'Does Nimbus Corp build weather balloons?';
beforeAll(async () => {
  t = await startTestNode();
  const body = {
    scope: 'gp',
    content:
      'Nimbus Corp builds weather balloons in Denver for research teams and universities across the western United States.',
    source: 'brochure',
    facts: {
      entities: [
        { name: 'Nimbus Corp', type: 'company' },
        { name: 'Denver', type: 'city' },
      ],
      relations: [{ source: 'Nimbus Corp', target: 'Denver', type: 'located_in' }],
    },
  };
  const r = await t.call('POST', '/v1/memory/remember', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
});
afterAll(() => t.stop());

type Item = { kind: string; text: string; uncovered?: string[] };
type Reply = {
  grounding: { verdict: string; uncovered: string[] };
  items: Item[];
  omitted?: { kind: string; reason: string }[];
};

async function context(body: Record<string, unknown>): Promise<Reply> {
  const r = await t.call('POST', '/v1/memory/context', { body: { scope: 'gp', question: QUESTION, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  ContextReply.parse(r.body);
  return r.body as Reply;
}

describe('grounding of a context pack', () => {
  it('each item says which words of the question it leaves uncovered', async () => {
    const r = await context({});
    expect(r.grounding.verdict).toBe('grounded');
    const passage = r.items.find((i) => i.kind === 'passage');
    expect(passage?.uncovered).toEqual([]);
    const fact = r.items.find((i) => i.kind === 'fact');
    expect(fact?.uncovered).toEqual(expect.arrayContaining(['build', 'weather', 'balloons']));
  });

  it('is judged over the items the pack kept, not those it left out', async () => {
    const r = await context({ tokenBudget: 40 });
    expect(r.omitted?.map((o) => o.kind)).toContain('passage');
    expect(r.items.some((i) => i.kind === 'passage')).toBe(false);
    expect(r.grounding.verdict).toBe('related');
    expect(r.grounding.uncovered).toEqual(expect.arrayContaining(['build', 'weather', 'balloons']));
  });

  it('stays grounded when the grounding item fits', async () => {
    const r = await context({ tokenBudget: 400 });
    expect(r.omitted).toEqual([]);
    expect(r.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
  });

  it('memory_query is at most partial when its pack leaves evidence out', async () => {
    const small = await t.call('POST', '/v1/memory/query', { body: { scope: 'gp', query: QUESTION, tokenBudget: 40 } });
    expect(small.status, JSON.stringify(small.body)).toBe(200);
    QueryReply.parse(small.body);
    const body = small.body as { sufficiency: string; omitted: unknown[] };
    expect(body.omitted.length).toBeGreaterThan(0);
    expect(body.sufficiency).toBe('partial');
    const whole = await t.call('POST', '/v1/memory/query', {
      body: { scope: 'gp', query: QUESTION, tokenBudget: 800 },
    });
    expect((whole.body as { sufficiency: string }).sufficiency).toBe('sufficient');
  });
});
