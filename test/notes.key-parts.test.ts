import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Found by an audit: a note key written `deploy.window` or `preferred_language` was one search
// term, so "what is the deploy window" never found `deploy.window`, and memory_context answered
// `grounded` from a note that only mentioned a window. A key's parts are now words of the note.

let t: TestNode;
const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { body: { scope: 'kp', ...body } });

beforeAll(async () => {
  t = await startTestNode();
  const notes: [string, unknown, string][] = [
    ['deploy.window', { day: 'Friday', from: '14:00', to: '16:00 UTC' }, 'decision'],
    ['release.checklist', 'Before each deploy, run the smoke tests and check the error budget window', 'decision'],
    ['db.choice', 'We chose PostgreSQL over MySQL for the analytics warehouse because of window functions', 'decision'],
    ['preferred_language', 'TypeScript', 'user_preference'],
    ['favorite-language', 'Rust', 'user_preference'],
  ];
  for (const [key, value, kind] of notes) expect((await post('note_write', { key, value, kind })).status).toBe(200);
});
afterAll(() => t.stop());

const keys = (r: { body: Record<string, unknown> }) => (r.body.notes as { key: string }[]).map((n) => n.key);

it.each([
  ['what is the deploy window', 'deploy.window'],
  ['deploy window', 'deploy.window'],
  ['preferred language', 'preferred_language'],
])('note_list %j finds %s first', async (query, key) => {
  const r = await post('note_list', { query });
  expect(r.status).toBe(200);
  expect(keys(r)[0]).toBe(key);
});

it('memory_context puts the keyed note first, also with a purpose and two items', async () => {
  for (const extra of [{}, { purpose: 'coding', maxItems: 2 }]) {
    const r = await post('context', { question: 'When is the deploy window?', ...extra });
    expect(r.status).toBe(200);
    const items = r.body.items as { note?: { key: string } }[];
    expect(items[0]?.note?.key, JSON.stringify(items.map((i) => i.note?.key))).toBe('deploy.window');
  }
});
