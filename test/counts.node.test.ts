import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// What forget and status count, through a real node: every form of memory_forget says what went
// and what was kept and why; status counts a scope's notes and handoffs, so a scope holding only
// those does not read as empty.

let t: TestNode;
let claude: string;
let codex: string;

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude' })).token;
  codex = (await t.token({ agent: 'codex' })).token;
});
afterAll(async () => t.stop());

const P = (verb: string, body: unknown, token = claude) => t.call('POST', `/v1/memory/${verb}`, { token, body });

describe('forget', () => {
  it('counts a forgotten note as every form counts', async () => {
    await P('note_write', { scope: 'fn', key: 'lang', value: 'en', kind: 'user_preference' });
    await P('note_write', { scope: 'fn', key: 'lang', value: 'de', kind: 'user_preference' });
    const r = await P('forget', { scope: 'fn', note: { key: 'lang' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      state: 'forgotten',
      forgotten: { entities: 0, facts: 0, documents: 0, passages: 0, attributes: 0, notes: 1, handoffs: 0 },
      kept: [],
      note: { key: 'lang', visibility: 'user', versions: 2 },
    });
  });

  it('lists the entities a forgotten document named as kept, with why', async () => {
    const stored = await P('remember', {
      scope: 'fp',
      content: 'Priya Raman met Tom Lee in Oslo.',
      facts: {
        entities: [
          { name: 'Priya Raman', type: 'person' },
          { name: 'Tom Lee', type: 'person' },
          { name: 'Oslo', type: 'city' },
        ],
      },
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    const r = await P('forget', { scope: 'fp', passage: stored.body.doc_id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.forgotten).toMatchObject({ documents: 1, passages: 1, entities: 0 });
    expect(r.body.kept).toEqual([{ what: 'entities', count: 3, why: expect.stringMatching(/own right/) }]);
    expect((await P('recall', { scope: 'fp', subject: 'Tom Lee' })).body.state).toBe('answered');
  });
});

describe('status', () => {
  it('counts the notes a caller may read and the live handoffs of every scope', async () => {
    const scope = 'notes-only';
    await P('note_write', { scope, key: 'lang', value: 'en', kind: 'user_preference' });
    await P('note_write', { scope, key: 'plan', value: 1, kind: 'task_state', visibility: 'task', taskId: 'T' });
    await P('note_write', { scope, key: 'mine', value: 1, kind: 'decision', visibility: 'agent' });
    await P('note_write', { scope, key: 'theirs', value: 1, kind: 'decision', visibility: 'agent' }, codex);
    await P('handoff_create', { scope, taskId: 'T', summary: 'pick up the plan' }, codex);
    const r = await t.call('GET', `/v1/memory/status?scope=${scope}`, { token: claude });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.scope).toEqual({ entities: 0, relations: 0, documents: 0, passages: 0, notes: 3, handoffs: 1 });
    const listed = (r.body.scopes as { scope: string }[]).find((s) => s.scope === scope);
    expect(listed).toEqual({ scope, entities: 0, relations: 0, documents: 0, notes: 3, handoffs: 1 });
    const theirs = await t.call('GET', `/v1/memory/status?scope=${scope}`, { token: codex });
    expect((theirs.body.scope as { notes: number }).notes, "codex sees its own agent note, not claude's").toBe(3);
  });
});
