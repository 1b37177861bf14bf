import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_import refuses what the write verbs refuse, a record at a time: a fact's valid time must
// be real dates in order (as relate checks them), names and relation types at most 1 KiB, and no
// record may hold a field its kind does not have. A bad record is skipped naming the field; the
// others of the page are stored. An export of every kind imports with nothing skipped. A fact
// imported before its document says so in its citation, and cites the document once it comes.

let t: TestNode;
type Rec = Record<string, unknown>;
type Skip = { index: number; reason: string };
type ImportReply = { imported: Record<string, number>; skipped: Skip[]; not_reproduced: Rec[] };

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

async function post(verb: string, body: Rec) {
  return t.call('POST', `/v1/memory/${verb}`, { body });
}

async function importInto(scope: string, records: Rec[]): Promise<ImportReply> {
  const r = await post('import', { scope, records });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as unknown as ImportReply;
}

const fact = (over: Rec): Rec => ({
  kind: 'fact',
  id: '9',
  from: '1',
  to: '2',
  from_name: 'PP',
  to_name: 'QQ',
  type: 'knows',
  recorded_at: '2024-01-01T00:00:00Z',
  attributes: {},
  provenance: { agent: 'a1', kind: 'asserted', label: null },
  ...over,
});

const fields = (r: ImportReply) => r.skipped.map((s) => [s.index, s.reason.split(':')[0]]);

async function recallObjects(scope: string, subject: string, extra: Rec = {}) {
  const r = await post('recall', { scope, subject, ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return ((r.body.facts ?? []) as Rec[]).map((f) => f.object);
}

it("skips a fact whose valid time relate would refuse, naming the field, and stores the page's good ones", async () => {
  const r = await importInto('valid', [
    fact({ valid_from: 'not a date', valid_to: 'yesterday' }),
    fact({ id: '10', valid_from: '2024-02-30' }),
    fact({ id: '11', valid_from: '2024-05-01', valid_to: '2024-01-01' }),
    fact({ id: '12', attributes: { valid_to: 'someday' } }),
    fact({ id: '13', from_name: 'RR', to_name: 'SS', valid_from: '2020-01-01', valid_to: '2021-01-01' }),
  ]);
  expect(fields(r)).toEqual([
    [0, 'valid_from'],
    [1, 'valid_from'],
    [2, 'valid_to'],
    [3, 'attributes.valid_to'],
  ]);
  expect(r.skipped[2]?.reason).toMatch(/must not be earlier than valid_from/);
  expect(r.imported.facts).toBe(1);
  for (const at of ['1990-01-01', '2999-01-01']) {
    expect(await recallObjects('valid', 'PP', { valid_at: at })).toEqual([]);
  }
  expect(await recallObjects('valid', 'RR', { valid_at: '2020-06-01' })).toEqual(['SS']);
  expect(await recallObjects('valid', 'RR', { valid_at: '2022-06-01' })).toEqual([]);
});

it('skips over-long names and types, and unknown fields, record by record', async () => {
  const long = 'n'.repeat(2000);
  const r = await importInto('sizes', [
    fact({ type: 't'.repeat(2000) }),
    { kind: 'entity', id: '1', name: long },
    { kind: 'entity', id: '2', name: 'Typed', types: ['x'.repeat(1025)] },
    { kind: 'entity', id: '3', name: 'Kept', recorded_at: '2024-01-01T00:00:00Z' },
    fact({ id: '14', from_name: long }),
    { kind: 'entity', id: '4', name: 'Evil', evil: 1 },
    fact({ id: '15', evil: 1 }),
    fact({ id: '16', provenance: { kind: 'asserted', agent: 'a1', label: null, evil: 1 } }),
    { kind: 'document', id: '5', text: 'Short.', ingested_at: '2024-01-01T00:00:00Z', passages: [], evil: 1 },
    { kind: 'note', key: 'k', value: 1, noteKind: 'user_fact', evil: 1 },
    { kind: 'handoff', taskId: 'T', summary: 's', evil: 1 },
    { kind: 'header', format: 'cairn.export', version: 1, evil: 1 },
  ]);
  expect(fields(r)).toEqual([
    [0, 'type'],
    [1, 'name'],
    [2, 'types[0]'],
    [4, 'from_name'],
    [5, 'evil'],
    [6, 'evil'],
    [7, 'provenance.evil'],
    [8, 'evil'],
    [9, 'evil'],
    [10, 'evil'],
    [11, 'evil'],
  ]);
  expect(r.imported).toMatchObject({ entities: 1, facts: 0, documents: 0, notes: 0, handoffs: 0 });
  const kept = await post('recall', { scope: 'sizes', subject: 'Kept' });
  expect(kept.body.state).toBe('answered');
  const evil = await post('recall', { scope: 'sizes', subject: 'Evil' });
  expect(evil.body.state).toBe('nothing_stored');
});

it('skips a name holding a C1 control character (U+0080–U+009F), as the write verbs refuse it', async () => {
  const r = await importInto('c1', [
    { kind: 'entity', id: '1', name: 'Ne\u0085xt' },
    { kind: 'entity', id: '2', name: 'Typed', types: ['t\u009b'] },
    fact({ type: 'kno\u0085ws' }),
    { kind: 'note', key: 'k\u0085', value: 1, noteKind: 'user_fact' },
    { kind: 'handoff', taskId: 'T\u009b', summary: 's' },
    { kind: 'entity', id: '3', name: 'Kept' },
  ]);
  expect(r.skipped.map((s) => [s.index, s.reason])).toEqual([
    [0, 'name: must not contain control characters'],
    [1, 'types[0]: must not contain control characters'],
    [2, 'type: must not contain control characters'],
    [3, 'key: must not contain control characters'],
    [4, 'taskId: must not contain control characters'],
  ]);
  expect(r.imported).toMatchObject({ entities: 1, facts: 0, notes: 0, handoffs: 0 });
  const listed = await post('note_list', { scope: 'c1' });
  expect(listed.body.notes).toEqual([]);
});

it('relate names `to` when from and to are one entity', async () => {
  const r = await post('relate', { scope: 'same', from: 'Same', to: 'same', type: 'x' });
  expect(r.status).toBe(422);
  expect(r.body.error?.details).toEqual([{ field: 'to', message: 'from and to name the same entity' }]);
});

async function exportAll(scope: string): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor: string | undefined;
  for (;;) {
    const r = await post('export', { scope, ...(cursor === undefined ? {} : { cursor }) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...(r.body.records as Rec[]));
    const next = r.body.next as string | null;
    if (next === null) return out;
    cursor = next;
  }
}

it('an export of every kind imports with nothing skipped', async () => {
  const scope = 'every';
  const stored = [
    await post('remember', {
      scope,
      content: 'Mara Holt founded Lumen Labs in Oslo. Lumen Labs builds boats.',
      date: '2023-04-01',
      source: 'chat',
      facts: {
        entities: [{ name: 'Mara Holt', type: 'person', attributes: { role: 'founder' } }],
        relations: [{ source: 'Mara Holt', target: 'Lumen Labs', type: 'founded' }],
      },
    }),
    await post('relate', {
      scope,
      from: 'Mara Holt',
      to: 'Oslo',
      type: 'lives_in',
      date: '2024-01-01',
      attributes: { valid_from: '2022-01-01' },
    }),
    await post('relate', { scope, from: 'Mara Holt', to: 'Bergen', type: 'lives_in', replaces: true }),
    await post('note_write', { scope, key: 'pref', value: { tea: true }, kind: 'user_preference' }),
    await post('note_write', { scope, key: 'pref', value: { tea: false }, kind: 'user_preference' }),
    await post('note_write', { scope, key: 'plan', value: 'ship', kind: 'task_state', taskId: 'T1' }),
    await post('handoff_create', { scope, taskId: 'T1', summary: 'half done', nextSteps: ['finish'] }),
  ];
  for (const s of stored) expect(s.status, JSON.stringify(s.body)).toBe(200);
  const records = await exportAll(scope);
  const kinds = new Set(records.map((r) => r.kind));
  expect([...kinds].sort()).toEqual(['document', 'entity', 'fact', 'handoff', 'header', 'note']);
  expect(records.some((r) => r.kind === 'fact' && r.source_date !== undefined)).toBe(true);
  const r = await importInto('every-copy', records);
  expect(r.skipped).toEqual([]);
  expect(r.imported.facts).toBeGreaterThan(0);
  expect(r.imported).toMatchObject({ documents: 1, notes: 2, handoffs: 1 });
  // And into the scope it came from: nothing new, nothing skipped.
  const again = await importInto(scope, records);
  expect(again.skipped).toEqual([]);
});

it('a fact imported before its document cites it as not imported yet, then resolves', async () => {
  const scope = 'cited';
  const said = await post('remember', {
    scope,
    content: 'Ivo Lund repairs clocks in Riga.',
    source: 'letters',
    facts: { relations: [{ source: 'Ivo Lund', target: 'Riga', type: 'works_in' }] },
  });
  expect(said.status, JSON.stringify(said.body)).toBe(200);
  const records = await exportAll(scope);
  const docs = records.filter((r) => r.kind === 'document');
  const rest = records.filter((r) => r.kind !== 'document');
  const first = await importInto('cited-copy', rest);
  expect(first.skipped).toEqual([]);
  expect(first.not_reproduced.map((n) => n.what)).toEqual(['citation']);
  const citation = async () => {
    const r = await post('recall', { scope: 'cited-copy', subject: 'Ivo Lund' });
    const f = (r.body.facts as Rec[]).find((x) => x.object === 'Riga');
    return f?.citation as Rec;
  };
  expect(await citation()).toMatchObject({ span: null, span_state: 'source_not_imported' });
  const second = await importInto('cited-copy', docs);
  expect(second).toMatchObject({ skipped: [], imported: { documents: 1 } });
  const resolved = await citation();
  expect(resolved.span_state).toBeUndefined();
  expect(resolved).toMatchObject({ source: { kind: 'document', name: 'letters' } });
  expect((resolved.span as Rec).text).toMatch(/Ivo Lund repairs clocks in Riga/);
  // A forgotten document still reads as forgotten.
  const doc = (resolved.source as Rec).doc_id as string;
  const gone = await post('forget', { scope: 'cited-copy', passage: doc });
  expect(gone.status, JSON.stringify(gone.body)).toBe(200);
  expect(await citation()).toMatchObject({ span: null, span_state: 'source_forgotten' });
});
