import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Agents store code: identifiers are found by their parts. The full-text tokenizer kept
// `config.ts`, `retryPolicy` and `MAX_RETRY_COUNT` as one term each, so "config", "retry policy"
// and "max retry count" found neither the passages nor the notes that spell them so.

let t: TestNode;
const SCOPE = 'idents';
const PASSAGES = {
  config: 'Deploy settings live in config.ts at the repo root.',
  retry: 'The HTTP client reads its retryPolicy from the environment.',
  max: 'We set MAX_RETRY_COUNT to 5 after the outage.',
};
beforeAll(async () => {
  t = await startTestNode();
  for (const content of Object.values(PASSAGES)) {
    const r = await t.call('POST', '/v1/memory/remember', { body: { scope: SCOPE, content, source: 'repo' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  const notes = [
    { key: 'client-settings', value: 'the retryPolicy backs off exponentially' },
    { key: 'layout', value: 'settings are read from config.ts' },
    { key: 'limits', value: 'MAX_RETRY_COUNT stays at 5' },
    { key: 'lunch', value: 'pizza on fridays' },
  ];
  for (const n of notes) {
    const r = await t.call('POST', '/v1/memory/note_write', { body: { scope: SCOPE, kind: 'decision', ...n } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

type Item = { kind: string; text: string; uncovered?: string[] };
type Reply = { grounding: { verdict: string; uncovered: string[] }; items: Item[] };

async function context(question: string): Promise<Reply> {
  const r = await t.call('POST', '/v1/memory/context', { body: { scope: SCOPE, question } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Reply;
}

type Note = { key: string; receipt: { channels: string[] } };

async function noteList(query: string): Promise<Note[]> {
  const r = await t.call('POST', '/v1/memory/note_list', { body: { scope: SCOPE, query } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body as { notes: Note[] }).notes;
}

describe('identifiers in full-text search', () => {
  it.each([
    ['Which deploy settings are in the config?', PASSAGES.config],
    ['What is the retry policy?', PASSAGES.retry],
    ['What is the max retry count?', PASSAGES.max],
  ])('memory_context %j finds and is grounded by the passage spelling it as an identifier', async (q, text) => {
    const r = await context(q);
    const passage = r.items.find((i) => i.kind === 'passage' && i.text === text);
    expect(passage, JSON.stringify(r.items)).toBeDefined();
    expect(passage?.uncovered).toEqual([]);
    expect(r.grounding.verdict).toBe('grounded');
  });

  it('an identifier as the question finds the passage that spells its words apart', async () => {
    const r = await t.call('POST', '/v1/memory/remember', {
      body: { scope: SCOPE, content: 'Our backoff policy doubles each retry wait.', source: 'wiki' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const reply = await context('What is the retryPolicy?');
    const passage = reply.items.find((i) => i.text.startsWith('Our backoff policy'));
    expect(passage?.uncovered, JSON.stringify(reply.items)).toEqual([]);
  });

  it.each([
    ['retry policy', 'client-settings'],
    ['config', 'layout'],
    ['max retry count', 'limits'],
  ])('memory_note_list %j finds the note by its words, through the token channel', async (query, key) => {
    const notes = await noteList(query);
    expect(notes[0]?.key, JSON.stringify(notes)).toBe(key);
    expect(notes[0]?.receipt.channels).toContain('token');
  });
});
