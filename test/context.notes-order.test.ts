import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Notes compete with facts and passages for memory_context's places (found by an audit: 22 of
// 60 questions whose answer was a note got it second, behind a passage that covered nothing the
// question asked, because the merge took the knowledge list's first item first whatever it held).

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  const turn = await t.call('POST', '/v1/memory/remember', {
    body: {
      scope: 'order',
      messages: [{ role: 'user', content: 'Where does billing run now and who do I ask about it?' }],
    },
  });
  expect(turn.status, JSON.stringify(turn.body)).toBe(200);
  const readme = await t.call('POST', '/v1/memory/remember', {
    body: {
      scope: 'order',
      content: 'The billing service bills customers every month. The package from the vendor arrived on Monday.',
      source: 'readme',
    },
  });
  expect(readme.status, JSON.stringify(readme.body)).toBe(200);
  const note = await t.call('POST', '/v1/memory/note_write', {
    body: { scope: 'order', key: 'package-manager', value: 'We use pnpm as the package manager', kind: 'decision' },
  });
  expect(note.status, JSON.stringify(note.body)).toBe(200);
  const owner = await t.call('POST', '/v1/memory/note_write', {
    body: { scope: 'order', key: 'billing-owner', value: 'Ask Dana about billing', kind: 'user_fact' },
  });
  expect(owner.status, JSON.stringify(owner.body)).toBe(200);
});
afterAll(() => t.stop());

type Item = { kind: string; text: string; uncovered?: string[]; fused?: { list: string; rank: number } };

async function items(question: string): Promise<Item[]> {
  const r = await t.call('POST', '/v1/memory/context', { body: { scope: 'order', question } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { items: Item[] }).items;
}

describe('notes beside knowledge in memory_context', () => {
  it('reads notes as they were at valid_at, as it reads facts and dated text', async () => {
    const body = { scope: 'order', question: 'What package manager do we use?' };
    const now = await t.call('POST', '/v1/memory/context', { body });
    expect((now.body as { items: Item[] }).items.some((i) => i.kind === 'note')).toBe(true);
    const before = await t.call('POST', '/v1/memory/context', { body: { ...body, valid_at: '2020-01-01' } });
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    expect((before.body as { items: Item[] }).items.some((i) => i.kind === 'note')).toBe(false);
  });

  it('puts first the note that answers, ahead of text sharing only function words', async () => {
    const got = await items('What package manager do we use?');
    expect(got[0]?.kind).toBe('note');
    expect(got[0]?.uncovered).toEqual([]);
    // The readme's package sentence is the knowledge list's first: it comes after the note.
    expect(got[1]).toMatchObject({ kind: 'passage', fused: { list: 'knowledge', rank: 1 } });
    expect(got[1]?.uncovered?.length).toBeGreaterThan(0);
    // The turn shares only "do" and "we" with the question: full text does not find it.
    expect(got.some((i) => i.text.includes('billing run now'))).toBe(false);
  });

  it('keeps the knowledge item first when it covers the question better than the note', async () => {
    const got = await items('Which customers does the billing service bill?');
    expect(got[0]).toMatchObject({ kind: 'passage', uncovered: [], fused: { list: 'knowledge', rank: 1 } });
    const note = got.find((i) => i.kind === 'note');
    expect(note).toMatchObject({ text: 'billing-owner: Ask Dana about billing', fused: { list: 'notes', rank: 1 } });
    expect(note?.uncovered?.length).toBeGreaterThan(0);
  });
});
