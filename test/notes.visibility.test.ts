import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The visibility matrix through the node: user/task/agent × same/other agent × same/other task ×
// private allowed by the node or not × includePrivate, on note_list, history and memory_context.

type Writer = (verb: string, body: object) => ReturnType<TestNode['call']>;

interface Setup {
  t: TestNode;
  alpha: Writer;
  beta: Writer;
}

async function setup(allowPrivate: boolean): Promise<Setup> {
  const t = await startTestNode({ allowPrivate });
  const as =
    (token: string): Writer =>
    (verb, body) =>
      t.call('POST', `/v1/memory/${verb}`, { token, body });
  const alpha = as((await t.token({ agent: 'alpha', user: 'u1' })).token);
  const beta = as((await t.token({ agent: 'beta', user: 'u1' })).token);
  const notes = [
    { key: 'n-user', value: 'shared with every agent', kind: 'user_fact', visibility: 'user' },
    { key: 'n-task', value: 'only task T1', kind: 'task_state', visibility: 'task', taskId: 'T1' },
    { key: 'n-agent', value: 'alpha only', kind: 'decision', visibility: 'agent' },
  ];
  for (const n of notes) expect((await alpha('note_write', n)).status).toBe(200);
  const priv = await alpha('note_write', { key: 'n-private', value: 'secret', kind: 'user_fact', private: true });
  if (allowPrivate) expect(priv.status).toBe(200);
  else {
    expect(priv.status).toBe(422);
    expect(priv.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'private' }] });
    // The refusal says what the operator can do about it (operations.md, CAIRN_ALLOW_PRIVATE).
    expect(priv.body.error?.message).toContain('start the node with CAIRN_ALLOW_PRIVATE=1');
  }
  return { t, alpha, beta };
}

/** What a reader must see, by the rules of DESIGN.md §1. */
function expected(reader: 'alpha' | 'beta', taskId: string | undefined, allow: boolean, include: boolean) {
  const keys = ['n-user'];
  if (taskId === 'T1') keys.push('n-task');
  if (reader === 'alpha') keys.push('n-agent');
  if (allow && include) keys.push('n-private');
  return keys.sort();
}

for (const allow of [false, true]) {
  describe(`visibility matrix, private notes ${allow ? 'allowed' : 'not allowed'} by the node`, () => {
    let s: Setup;
    beforeAll(async () => {
      s = await setup(allow);
    });
    afterAll(async () => s.t.stop());

    for (const reader of ['alpha', 'beta'] as const) {
      for (const taskId of [undefined, 'T1', 'T2']) {
        for (const includePrivate of [false, true]) {
          it(`${reader}, task ${taskId ?? 'none'}, includePrivate ${includePrivate}`, async () => {
            const call = reader === 'alpha' ? s.alpha : s.beta;
            const body = { ...(taskId === undefined ? {} : { taskId }), includePrivate };
            const listed = await call('note_list', body);
            expect(listed.status).toBe(200);
            const keys = (listed.body.notes as { key: string }[]).map((n) => n.key).sort();
            const want = expected(reader, taskId, allow, includePrivate);
            // `taskId` filters the list to that task's notes (DESIGN.md §2), of those the reader sees.
            const listWant = taskId === undefined ? want : want.filter((k) => k === 'n-task');
            expect(keys).toEqual(listWant);
            // A query finds exactly the listed notes that match, never an invisible one.
            const found = await call('note_list', { ...body, query: 'task only alpha shared secret' });
            for (const n of found.body.notes as { key: string }[]) expect(listWant).toContain(n.key);
            // History of an invisible note reads as empty or refused, never its values.
            for (const key of ['n-task', 'n-agent', 'n-private']) {
              const h = await call('history', { key, ...body });
              const text = JSON.stringify(h.body);
              if (!want.includes(key)) {
                expect(text).not.toContain('only task T1');
                expect(text).not.toContain('alpha only');
                expect(text).not.toContain('secret');
              }
            }
          });
        }
      }
    }

    it('another user of the same node sees none of them', async () => {
      const other = (await s.t.token({ agent: 'alpha', user: 'u2' })).token;
      const r = await s.t.call('POST', '/v1/memory/note_list', {
        token: other,
        body: { taskId: 'T1', includePrivate: true },
      });
      expect(r.body.notes).toEqual([]);
    });

    it('audit lists the caller’s own events only', async () => {
      await s.beta('note_write', { key: 'n-beta', value: 'by beta', kind: 'user_fact' });
      const mine = await s.alpha('audit', {});
      expect(mine.status).toBe(200);
      const agents = new Set((mine.body.events as { agent: string }[]).map((e) => e.agent));
      expect([...agents]).toEqual(['alpha']);
      const theirs = await s.beta('audit', {});
      expect((theirs.body.events as { agent: string }[]).map((e) => e.agent)).toEqual(['beta']);
    });
  });
}

describe('cursor misuse', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup(false);
    for (let i = 0; i < 5; i++) await s.alpha('note_write', { key: `page-${i}`, value: i, kind: 'user_fact' });
  });
  afterAll(async () => s.t.stop());

  const refusedForCursor = (r: Awaited<ReturnType<Writer>>) => {
    expect(r.status).toBe(422);
    expect(r.body.error?.code).toBe('VALIDATION_ERROR');
    expect(r.body.error?.message).toMatch(/cursor/);
  };

  it('a cursor continues only the query it came from', async () => {
    const first = await s.alpha('note_list', { limit: 2 });
    const cursor = first.body.nextCursor as string;
    expect(typeof cursor).toBe('string');
    const next = await s.alpha('note_list', { limit: 3, cursor });
    expect(next.status).toBe(200);
    const seen = [...(first.body.notes as { key: string }[]), ...(next.body.notes as { key: string }[])].map(
      (n) => n.key,
    );
    expect(new Set(seen).size).toBe(seen.length);
    refusedForCursor(await s.alpha('note_list', { limit: 2, cursor, kind: 'decision' }));
    refusedForCursor(await s.alpha('note_list', { limit: 2, cursor, query: 'page' }));
    refusedForCursor(await s.beta('note_list', { limit: 2, cursor }));
    refusedForCursor(await s.alpha('note_list', { limit: 2, cursor, scope: 'elsewhere' }));
    refusedForCursor(await s.alpha('history', { key: 'page-1', cursor }));
    refusedForCursor(await s.alpha('note_list', { cursor: 'not-a-cursor' }));
    // The binding (the first bytes) is checked; a damaged one is refused.
    const flipped = `${cursor[0] === 'A' ? 'B' : 'A'}${cursor.slice(1)}`;
    refusedForCursor(await s.alpha('note_list', { limit: 2, cursor: flipped }));
    const otherUser = (await s.t.token({ agent: 'alpha', user: 'u2' })).token;
    refusedForCursor(await s.t.call('POST', '/v1/memory/note_list', { token: otherUser, body: { limit: 2, cursor } }));
  });

  it('a query cursor pages through every match once', async () => {
    const keys: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await s.alpha('note_list', { query: 'page', limit: 2, ...(cursor === null ? {} : { cursor }) });
      expect(r.status).toBe(200);
      for (const n of r.body.notes as { key: string; receipt: { channels: string[] } }[]) {
        keys.push(n.key);
        expect(n.receipt.channels.length).toBeGreaterThan(0);
      }
      cursor = r.body.nextCursor as string | null;
    } while (cursor !== null);
    expect(keys.filter((k) => k.startsWith('page-')).sort()).toEqual([
      'page-0',
      'page-1',
      'page-2',
      'page-3',
      'page-4',
    ]);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
