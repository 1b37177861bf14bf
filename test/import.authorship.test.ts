import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_import keeps a record's author and times, as a restore must: so an agent token may bring
// back only what its own agent wrote (a handoff's `from`, a note version's `agent`, a fact's
// `provenance.agent`), while an admin token restores every agent's; and no token may bring a
// record stamped later than now (a 2099 capsule would stay "newest" for ever, a note dated ahead
// would read in `as_of` before it existed). Each refusal is a skip naming the field.

let t: TestNode;
let claude: string;
let codex: string;
type Rec = Record<string, unknown>;

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ann' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
});
afterAll(() => t.stop());

async function importAs(token: string | undefined, scope: string, records: Rec[]) {
  const r = await t.call('POST', '/v1/memory/import', {
    ...(token === undefined ? {} : { token }),
    body: { scope, records, ...(token === undefined ? { user_id: 'ann' } : {}) },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { imported: Record<string, number>; skipped: { index: number; reason: string }[] };
}

const FUTURE = '2099-01-01T00:00:00.000Z';
const capsule = (over: Rec): Rec => ({
  kind: 'handoff',
  taskId: 'H1',
  summary: 'from the operator: do Y',
  createdAt: '2024-01-01T00:00:00.000Z',
  expiresAt: '2100-01-01T00:00:00.000Z',
  ...over,
});

it("an agent token cannot forge a handoff's sender, nor pin one in the future", async () => {
  const r = await importAs(codex, 'hand', [
    capsule({ from: 'admin', createdAt: FUTURE }),
    capsule({ from: 'claude' }),
    capsule({ from: 'codex', createdAt: FUTURE }),
  ]);
  expect(r.imported.handoffs).toBe(0);
  expect(r.skipped.map((s) => [s.index, s.reason.split(':')[0]])).toEqual([
    [0, 'from'],
    [1, 'from'],
    [2, 'createdAt'],
  ]);
  expect(r.skipped[1]?.reason).toMatch(/^from: names agent "claude"; an agent token imports only/);
  expect(r.skipped[2]?.reason).toMatch(/^createdAt: 2099-01-01T00:00:00.000Z is later than now/);
  const left = await t.call('POST', '/v1/memory/handoff_create', {
    token: codex,
    body: { scope: 'hand', taskId: 'H1', summary: 'the real one' },
  });
  expect(left.status).toBe(200);
  const resumed = await t.call('POST', '/v1/memory/handoff_resume', {
    token: claude,
    body: { scope: 'hand', taskId: 'H1' },
  });
  expect(resumed.body).toMatchObject({ state: 'resumed', handoff: { from: 'codex', summary: 'the real one' } });
});

it("an agent's own handoff, and an admin's restore of anyone's, keep their author and time", async () => {
  const own = await importAs(codex, 'own', [capsule({ from: 'codex' })]);
  expect(own).toMatchObject({ imported: { handoffs: 1 }, skipped: [] });
  const restored = await importAs(undefined, 'restore', [capsule({ from: 'claude' })]);
  expect(restored).toMatchObject({ imported: { handoffs: 1 }, skipped: [] });
  const resumed = await t.call('POST', '/v1/memory/handoff_resume', {
    token: codex,
    body: { scope: 'restore', taskId: 'H1' },
  });
  expect(resumed.body).toMatchObject({ handoff: { from: 'claude', createdAt: '2024-01-01T00:00:00.000Z' } });
  // Not even an admin brings a capsule from the future.
  const ahead = await importAs(undefined, 'restore', [capsule({ from: 'claude', createdAt: FUTURE })]);
  expect(ahead.skipped.map((s) => s.reason.split(':')[0])).toEqual(['createdAt']);
});

const note = (over: Rec): Rec => ({
  kind: 'note',
  key: 'k',
  value: 'v',
  noteKind: 'user_fact',
  visibility: 'user',
  version: 1,
  createdAt: '2020-01-01T00:00:00.000Z',
  updatedAt: '2020-01-01T00:00:00.000Z',
  ...over,
});

it("an agent token cannot put a note in another agent's mouth, nor date it ahead", async () => {
  const r = await importAs(codex, 'imp', [
    note({ key: 'forged', agent: 'claude' }),
    note({
      key: 'earlier',
      agent: 'codex',
      version: 2,
      versions: [{ version: 1, value: 'x', noteKind: 'user_fact', agent: 'claude' }],
    }),
    note({ key: 'ahead', agent: 'codex', updatedAt: FUTURE }),
  ]);
  expect(r.imported.notes).toBe(0);
  expect(r.skipped.map((s) => [s.index, s.reason.split(':')[0]])).toEqual([
    [0, 'agent'],
    [1, 'versions[0].agent'],
    [2, 'updatedAt'],
  ]);
  const list = await t.call('POST', '/v1/memory/note_list', { token: claude, body: { scope: 'imp' } });
  expect(list.body.notes).toEqual([]);
});

it('an agent may bring back its own backdated note: it reads as of then, signed with its name', async () => {
  const r = await importAs(codex, 'mine', [note({ key: 'old', agent: 'codex' })]);
  expect(r).toMatchObject({ imported: { notes: 1 }, skipped: [] });
  const then = await t.call('POST', '/v1/memory/note_list', {
    token: claude,
    body: { scope: 'mine', as_of: '2021-01-01' },
  });
  expect(then.body.notes).toMatchObject([{ key: 'old', agent: 'codex' }]);
});

it('facts, entities and documents: the author is the importer, no time is ahead of now', async () => {
  const fact = {
    kind: 'fact',
    id: '7',
    from_name: 'Ana',
    to_name: 'Acme',
    type: 'works_at',
    recorded_at: '2024-01-01T00:00:00.000Z',
  };
  const doc = {
    kind: 'document',
    id: '9',
    text: 'Ana works at Acme.',
    ingested_at: FUTURE,
    passages: [{ ordinal: 0, start: 0, end: 18 }],
  };
  const r = await importAs(codex, 'facts', [
    { ...fact, provenance: { kind: 'asserted', agent: 'claude' } },
    { ...fact, id: '8', agent: 'claude' },
    { ...fact, id: '10', ended_at: FUTURE },
    { kind: 'entity', id: '11', name: 'Bo', recorded_at: FUTURE },
    doc,
    { ...fact, id: '12', provenance: { kind: 'asserted', agent: 'codex' } },
  ]);
  expect(r.skipped.map((s) => [s.index, s.reason.split(':')[0]])).toEqual([
    [0, 'provenance.agent'],
    [1, 'agent'],
    [2, 'ended_at'],
    [3, 'recorded_at'],
    [4, 'ingested_at'],
  ]);
  expect(r.imported).toMatchObject({ facts: 1, documents: 0 });
  const admin = await importAs(undefined, 'facts-admin', [
    { ...fact, provenance: { kind: 'asserted', agent: 'claude' } },
  ]);
  expect(admin).toMatchObject({ imported: { facts: 1 }, skipped: [] });
});

it("an admin's file import (one bulk load) skips a line stamped ahead of now", async () => {
  const lines = [
    { kind: 'entity', id: '1', name: 'Now', recorded_at: '2024-01-01T00:00:00.000Z' },
    { kind: 'entity', id: '2', name: 'Later', recorded_at: FUTURE },
    { kind: 'fact', id: '3', from: '1', to: '1', from_name: 'Now', to_name: 'Now', type: 'is', recorded_at: FUTURE },
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
  const r = await t.call('POST', '/v1/admin/import?user=ann&scope=file', {
    body: lines,
    headers: { 'content-type': 'application/x-ndjson' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ mode: 'load', imported: { entities: 1, facts: 0 } });
  expect((r.body.skipped as { index: number; reason: string }[]).map((s) => [s.index, s.reason.split(':')[0]])).toEqual(
    [
      [1, 'recorded_at'],
      [2, 'recorded_at'],
    ],
  );
});
