import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_export / memory_import carry notes and handoffs over HTTP: the header lists the kinds,
// private notes leave only when the node allows them and the caller asks (else they are counted
// as withheld), and export → import into an empty scope → export gives the same records, with a
// second import changing nothing.

let t: TestNode;
type Rec = Record<string, unknown>;

beforeAll(async () => {
  t = await startTestNode({ allowPrivate: true });
  const notes = [
    { key: 'editor', value: { name: 'helix' }, kind: 'user_preference' },
    { key: 'plan', value: 'ship on friday', kind: 'task_state', visibility: 'task', taskId: 'release' },
    { key: 'mine', value: [1, 2], kind: 'decision', visibility: 'agent' },
    { key: 'secret', value: 'pin 1234', kind: 'user_fact', private: true },
  ];
  for (const body of notes) expect((await t.call('POST', '/v1/memory/note_write', { body })).status).toBe(200);
  const handoff = { taskId: 'release', summary: 'tests pass, docs left', nextSteps: ['write docs'] };
  expect((await t.call('POST', '/v1/memory/handoff_create', { body: handoff })).status).toBe(200);
});
afterAll(() => t.stop());

async function exportAll(scope: string, includePrivate: boolean): Promise<Rec[]> {
  const out: Rec[] = [];
  let cursor: string | null = null;
  do {
    const body: Rec = { scope, limit: 2, includePrivate, ...(cursor === null ? {} : { cursor }) };
    const r = await t.call('POST', '/v1/memory/export', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...(r.body.records as Rec[]));
    cursor = r.body.next as string | null;
  } while (cursor !== null);
  return out;
}

/** Records without store-local ids and export stamps, sorted, so two scopes' exports compare. */
function normalized(records: Rec[]): string[] {
  // The origin names the exported scope, as `scope` does.
  return records
    .map(({ id: _id, exported_at: _at, scope: _scope, origin: _origin, ...rest }) => JSON.stringify(rest))
    .sort();
}

it('exports notes and handoffs, private notes only when asked for', async () => {
  const plain = await exportAll('default', false);
  expect(plain[0]).toMatchObject({
    kind: 'header',
    kinds: ['header', 'entity', 'fact', 'document', 'note', 'handoff'],
    withheld: { private_notes: 1 },
  });
  const notes = plain.filter((r) => r.kind === 'note');
  expect(notes.map((n) => n.key)).toEqual(['editor', 'mine', 'plan']);
  expect(notes[2]).toMatchObject({ noteKind: 'task_state', visibility: 'task', taskId: 'release', version: 1 });
  const handoffs = plain.filter((r) => r.kind === 'handoff');
  expect(handoffs).toHaveLength(1);
  expect(handoffs[0]).toMatchObject({ taskId: 'release', summary: 'tests pass, docs left', nextSteps: ['write docs'] });
  expect(handoffs[0]?.id).toMatch(/^\d+$/);
  const all = await exportAll('default', true);
  expect(all[0]).toMatchObject({ withheld: { private_notes: 0 } });
  expect(all.filter((r) => r.kind === 'note').map((n) => n.key)).toContain('secret');
});

it('round trips into an empty scope, and a second import changes nothing', async () => {
  const records = await exportAll('default', true);
  const first = await t.call('POST', '/v1/memory/import', { body: { scope: 'copy', records } });
  expect(first.status).toBe(200);
  expect(first.body.skipped).toEqual([]);
  expect(first.body.imported).toEqual({ entities: 0, facts: 0, documents: 0, notes: 4, handoffs: 1 });
  expect(normalized(await exportAll('copy', true))).toEqual(normalized(records));
  const again = await t.call('POST', '/v1/memory/import', { body: { scope: 'copy', records } });
  expect(again.body.imported).toEqual({ entities: 0, facts: 0, documents: 0, notes: 0, handoffs: 0 });
  expect(again.body.unchanged).toMatchObject({ notes: 4, handoffs: 1 });
  const resumed = await t.call('POST', '/v1/memory/handoff_resume', { body: { scope: 'copy', taskId: 'release' } });
  expect(resumed.body).toMatchObject({ state: 'resumed', handoff: { summary: 'tests pass, docs left' } });
});

it('skips a bad note record by its field', async () => {
  const records = [{ kind: 'note', key: 'k', value: 1, noteKind: 'gossip' }];
  const r = await t.call('POST', '/v1/memory/import', { body: { scope: 'bad', records } });
  expect(r.status).toBe(200);
  expect(r.body.skipped).toEqual([{ index: 0, reason: expect.stringMatching(/^noteKind: /) }]);
});

it("an agent's own notes leave and come back only with its token, or an admin's", async () => {
  const claude = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
  const note = { key: 'scratch', value: 'claude only', kind: 'decision', visibility: 'agent' };
  expect((await t.call('POST', '/v1/memory/note_write', { token: claude, body: note })).status).toBe(200);
  const keys = async (token: string | undefined, body: Rec) => {
    const r = await t.call('POST', '/v1/memory/export', { ...(token === undefined ? {} : { token }), body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.records as Rec[]).filter((x) => x.kind === 'note').map((x) => x.key);
  };
  expect(await keys(claude, {})).toContain('scratch');
  expect(await keys(codex, {})).not.toContain('scratch');
  expect(await keys(undefined, { user_id: 'ann' })).toContain('scratch');
  // codex may not write claude's agent note by import, nor set the node's own flag itself.
  const forged = { ...note, kind: 'note', noteKind: 'decision', value: 'codex was here', owner: 'claude', version: 1 };
  const r = await t.call('POST', '/v1/memory/import', { token: codex, body: { records: [forged] } });
  expect(r.body.skipped).toEqual([{ index: 0, reason: 'owner: an agent note is imported by its own agent only' }]);
  const sneaky = await t.call('POST', '/v1/memory/import', {
    token: codex,
    body: { records: [forged], allAgents: true },
  });
  expect(sneaky.status).toBe(422);
  const list = await t.call('POST', '/v1/memory/note_list', { token: claude, body: { key: 'scratch' } });
  expect((list.body.notes as Rec[])[0]?.value).toBe('claude only');
});

it('a note with several versions, by several agents, reads in the copy as in the source', async () => {
  const writers = [(await t.token({ agent: 'claude' })).token, (await t.token({ agent: 'codex' })).token];
  const scope = 'versions';
  const values = ['draft', 'review', 'ship'];
  for (const [i, value] of values.entries()) {
    const body = {
      scope,
      key: 'launch',
      value,
      kind: 'task_state',
      ...(i === 1 ? { confidence: 0.5, confidenceBasis: 'agent_inferred' } : {}),
    };
    const r = await t.call('POST', '/v1/memory/note_write', { token: writers[i % 2], body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
  }
  const pages: Rec[][] = [];
  let cursor: string | null = null;
  do {
    const body: Rec = { scope, limit: 1, includePrivate: true, ...(cursor === null ? {} : { cursor }) };
    const r = await t.call('POST', '/v1/memory/export', { body });
    pages.push(r.body.records as Rec[]);
    cursor = r.body.next as string | null;
  } while (cursor !== null);
  const note = pages.flat().find((r) => r.kind === 'note');
  expect(((note?.versions ?? []) as Rec[]).map((v) => v.value)).toEqual(['draft', 'review']);
  for (const records of pages.reverse()) {
    const r = await t.call('POST', '/v1/memory/import', { body: { scope: 'versions-copy', records } });
    expect(r.body.skipped).toEqual([]);
  }
  const read = async (s: string, verb: string, extra: Rec = {}) => {
    const r = await t.call('POST', `/v1/memory/${verb}`, { body: { scope: s, key: 'launch', ...extra } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const trail = async (s: string) =>
    ((await read(s, 'history')).events as Rec[]).map((e) => {
      const after = e.after as Rec;
      return [e.agent, e.at, after.version, after.value, after.confidence];
    });
  const source = await trail(scope);
  expect(source.map((e) => e[0])).toEqual(['claude', 'codex', 'claude']);
  expect(await trail('versions-copy')).toEqual(source);
  const times = source.map((e) => String(e[1]));
  for (const as_of of [...times, new Date(Date.parse(times[0] as string) - 1).toISOString()]) {
    const strip = (b: Rec) => (b.notes as Rec[]).map(({ id: _id, ...rest }) => rest);
    expect(strip(await read('versions-copy', 'note_list', { as_of })), as_of).toEqual(
      strip(await read(scope, 'note_list', { as_of })),
    );
  }
});

it('a note too large for one page leaves in several records, and each page imports as it came', async () => {
  const scope = 'large';
  for (let i = 0; i < 6; i++) {
    const body = { scope, key: 'state', value: `${i}:${'x'.repeat(60 * 1024)}`, kind: 'task_state' };
    const r = await t.call('POST', '/v1/memory/note_write', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
  // The default page is 64 KiB: one version a record, one record a page.
  const pages: Rec[][] = [];
  let cursor: string | null = null;
  do {
    const r = await t.call('POST', '/v1/memory/export', { body: { scope, ...(cursor === null ? {} : { cursor }) } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(r.body.records).length).toBeLessThanOrEqual(64 * 1024);
    pages.push(r.body.records as Rec[]);
    cursor = r.body.next as string | null;
  } while (cursor !== null);
  const notes = pages.flat().filter((r) => r.kind === 'note');
  expect(notes.map((n) => n.version)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(notes.map((n) => n.continued ?? false)).toEqual([true, true, true, true, true, false]);
  expect(notes.map((n) => n.follows ?? null)).toEqual([null, 1, 2, 3, 4, 5]);
  for (const records of pages) {
    const r = await t.call('POST', '/v1/memory/import', { body: { scope: 'large-copy', records } });
    expect(r.status).toBe(200);
    expect(r.body.skipped).toEqual([]);
  }
  const history = async (s: string) => {
    const out: unknown[] = [];
    let next: string | null = null;
    do {
      const body: Rec = { scope: s, key: 'state', ...(next === null ? {} : { cursor: next }) };
      const r = await t.call('POST', '/v1/memory/history', { body });
      out.push(...(r.body.events as Rec[]).map((e) => [e.agent, e.at, (e.after as Rec).version]));
      next = r.body.nextCursor as string | null;
    } while (next !== null);
    return out;
  };
  expect(await history('large-copy')).toEqual(await history(scope));
  expect((await history(scope)).length).toBe(6);
});
