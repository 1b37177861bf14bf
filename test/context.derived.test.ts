import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContextReply } from '../ts/protocol/replies-knowledge.js';
import { startTestNode, type TestNode } from './node.js';

// memory_context over HTTP shows the facts that follow from its seeds' relations (DESIGN.md §2,
// issue 3 items 5 and 9): a transitive chain grounds a question neither link answers, symmetric
// and inverse readings come after the stored fact they rest on, and a read as of a time before
// one link derives nothing from it.

let t: TestNode;
let firstLinkAt = 0;
beforeAll(async () => {
  t = await startTestNode();
  const remember = async (content: string, source: string, target: string, type: string) => {
    const body = { content, source: 'memo', facts: { relations: [{ source, target, type }] } };
    const r = await t.call('POST', '/v1/memory/remember', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  await remember('Room 4 is part of Wing B.', 'Room 4', 'Wing B', 'part_of');
  // The first link is known before the second is recorded.
  firstLinkAt = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await remember('Wing B is part of Main Hall.', 'Wing B', 'Main Hall', 'part_of');
  await remember('Ann Lee is married to Bob Stone.', 'Ann Lee', 'Bob Stone', 'married_to');
  await remember('Jonas Weber manages Priya Raman.', 'Jonas Weber', 'Priya Raman', 'manages');
});
afterAll(() => t.stop());

type Item = {
  kind: string;
  text: string;
  id: string | null;
  derived?: true;
  rule?: string;
  rests_on?: string[];
  channels: string[];
  citation: { span: { text: string } | null } | null;
};

async function context(body: Record<string, unknown>) {
  const r = await t.call('POST', '/v1/memory/context', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  ContextReply.parse(r.body);
  return r.body as {
    grounding: { verdict: string; uncovered: string[] };
    items: Item[];
    coverage: { derived: number };
    context?: string;
    omitted?: { kind: string; id: string | null; reason: string }[];
  };
}

function find(items: Item[], text: string): [number, Item] {
  const at = items.findIndex((i) => i.text === text);
  expect(at, `${text} in ${JSON.stringify(items.map((i) => i.text))}`).toBeGreaterThanOrEqual(0);
  return [at, items[at] as Item];
}

describe('derived facts in memory_context', () => {
  it('grounds a question with a transitive chain, cited by the stored facts it rests on', async () => {
    const c = await context({ question: 'Is Room 4 part of Main Hall?' });
    expect(c.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
    const [at, d] = find(c.items, 'Room 4 part_of Main Hall');
    const [first, link1] = find(c.items, 'Room 4 part_of Wing B');
    const [second, link2] = find(c.items, 'Wing B part_of Main Hall');
    // Its type is the question's word "part": the relation channel ranks it too.
    expect(d).toMatchObject({ kind: 'fact', id: null, derived: true, rule: 'transitive' });
    expect(d.channels).toEqual(['relation', 'graph']);
    expect(d.rests_on).toEqual([link1.id, link2.id]);
    expect(d.citation?.span?.text).toBe('Room 4 is part of Wing B.');
    // It answers the question better than either link, so it may rank before them.
    expect(at).toBeLessThan(Math.min(first, second));
    expect(c.coverage.derived).toBeGreaterThanOrEqual(1);
  });

  it('reads symmetric and inverse facts from the other end, after the stored fact', async () => {
    const married = await context({ question: 'Who is Bob Stone married to?' });
    const [at, d] = find(married.items, 'Bob Stone married_to Ann Lee');
    const [stored, fact] = find(married.items, 'Ann Lee married_to Bob Stone');
    expect(d).toMatchObject({ derived: true, rule: 'symmetric', rests_on: [fact.id] });
    expect(stored).toBeLessThan(at);
    const managed = await context({ question: 'Who is Priya Raman managed by?' });
    const [, inverse] = find(managed.items, 'Priya Raman managed_by Jonas Weber');
    const [, manages] = find(managed.items, 'Jonas Weber manages Priya Raman');
    expect(inverse).toMatchObject({ derived: true, rule: 'inverse', rests_on: [manages.id] });
  });

  it('derives nothing from a link recorded after as_of', async () => {
    const before = await context({
      question: 'Is Room 4 part of Main Hall?',
      as_of: new Date(firstLinkAt).toISOString(),
    });
    expect(before.items.filter((i) => i.derived)).toEqual([]);
    expect(before.coverage.derived).toBe(0);
    find(before.items, 'Room 4 part_of Wing B');
    expect(before.grounding.verdict).toBe('related');
  });

  it('respects k and the context pack budget', async () => {
    const one = await context({ question: 'Is Room 4 part of Main Hall?', k: 1 });
    expect(one.items).toHaveLength(1);
    const packed = await context({ question: 'Is Room 4 part of Main Hall?', tokenBudget: 500 });
    expect(packed.context).toMatch(/\[\d\] Room 4 part_of Main Hall — memo/);
    // A budget of 32 tokens holds the two facts that answer, the stored link first, and leaves the
    // passages out whole; one item only leaves out the derived fact, after the link it rests on.
    const tight = await context({ question: 'What is Room 4 part of?', tokenBudget: 32 });
    expect(tight.context).toContain('[1] Room 4 part_of Wing B');
    expect(tight.context).toContain('[2] Room 4 part_of Main Hall');
    expect(tight.omitted).toContainEqual(expect.objectContaining({ kind: 'passage', reason: 'token_budget' }));
    const single = await context({ question: 'What is Room 4 part of?', tokenBudget: 32, maxItems: 1 });
    expect(single.context).not.toContain('Room 4 part_of Main Hall');
    expect(single.omitted).toContainEqual(expect.objectContaining({ kind: 'fact', id: null }));
  });
});
