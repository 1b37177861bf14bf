import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// What an export header's `withheld` counts (reviewed in session 38: its fields name only private
// notes, so the question was what else an export leaves out). It counts what `includePrivate` on a
// node allowing private notes would add: the private notes the reader may read, whoever wrote
// them, and the private earlier versions of notes that did leave. Another agent's own notes
// (`visibility: agent`) are not the reader's to read at all, so they are neither exported nor
// counted (memory_status does not count them either), and forgotten notes are gone, not withheld.

let t: TestNode;
let reader: string;
type Rec = Record<string, unknown>;

beforeAll(async () => {
  t = await startTestNode({ allowPrivate: true });
  const writer = (await t.token({ agent: 'writer', user: 'ann' })).token;
  reader = (await t.token({ agent: 'reader', user: 'ann' })).token;
  const note = (key: string, extra: Rec = {}) => ({ key, value: key, kind: 'decision', ...extra });
  const writes: [string, Rec][] = [
    [reader, note('mine-private', { private: true })],
    [writer, note('shared-private', { private: true })],
    [writer, note('theirs', { visibility: 'agent' })],
    [writer, note('theirs-private', { visibility: 'agent', private: true })],
    [reader, note('task-private', { visibility: 'task', taskId: 'release', private: true })],
    // A note that leaves, with one private earlier version.
    [reader, note('theme', { private: true })],
    [reader, { ...note('theme'), value: 'light', private: false }],
    [reader, note('gone-private', { private: true })],
  ];
  for (const [token, body] of writes) {
    const r = await t.call('POST', '/v1/memory/note_write', { token, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  const forgot = await t.call('POST', '/v1/memory/forget', { token: reader, body: { note: { key: 'gone-private' } } });
  expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
});
afterAll(() => t.stop());

async function exported(includePrivate: boolean): Promise<Rec[]> {
  const r = await t.call('POST', '/v1/memory/export', { token: reader, body: { includePrivate } });
  expect([r.status, r.body.next]).toEqual([200, null]);
  return r.body.records as Rec[];
}

it('counts what includePrivate would add, and nothing of another agent’s own notes or forgotten ones', async () => {
  const plain = await exported(false);
  expect(plain[0]?.withheld).toEqual({ private_notes: 3, private_versions: 1 });
  expect(plain.filter((r) => r.kind === 'note').map((r) => r.key)).toEqual(['theme']);

  const asked = await exported(true);
  expect(asked[0]?.withheld).toEqual({ private_notes: 0, private_versions: 0 });
  const keys = asked.filter((r) => r.kind === 'note').map((r) => r.key);
  // Exactly the three private notes and the version counted above were added; `theirs` and
  // `theirs-private` are in neither export, `gone-private` in none.
  expect(keys).toEqual(['mine-private', 'shared-private', 'task-private', 'theme']);
  const theme = asked.find((r) => r.key === 'theme') as { versions: unknown[] };
  expect(theme.versions).toHaveLength(1);
});
