import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// DESIGN.md §1: no count of another user's writes reaches a caller. Ids and history sequence
// numbers come from one counter per (tenant, user, scope), so alice's ids step the same way
// whether or not bob wrote in between.

let t: TestNode;
let alice: string;
let bob: string;

const post = (token: string, scope: string, verb: string, body: object) =>
  t.call('POST', `/v1/memory/${verb}`, { token, body, headers: { 'x-cairn-scope': scope } });

/** A reply's body, refused unless the verb answered 200. */
async function ok<T>(reply: Promise<{ status: number; body: unknown }>): Promise<T> {
  const r = await reply;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as T;
}

type Events = { events: { seq: string }[] };

/** Bob's writes of every family, `n` of each. */
async function bobWrites(n: number) {
  for (let i = 0; i < n; i++) {
    await ok(post(bob, 'default', 'remember', { content: `Bob note ${n}.${i}: Ada met Grace.`, source: 'b' }));
    await ok(post(bob, 'default', 'relate', { from: `Bob ${n}.${i}`, to: 'Lovelace', type: 'knows' }));
    await ok(post(bob, 'default', 'note_write', { key: `b${n}.${i}`, value: i, kind: 'user_fact' }));
    await ok(post(bob, 'default', 'handoff_create', { taskId: 'bt', summary: `bob ${n}.${i}` }));
  }
}

/** Alice's rounds in `scope`, `between(round)` running before each of her writes: the ids her
 * replies show (per round: doc, fact, subject, object, note, handoff), then the seq of a note's
 * history and of her audit. */
async function aliceRounds(scope: string, between: (round: number) => Promise<void>): Promise<bigint[]> {
  const ids: string[] = [];
  for (let round = 0; round < 3; round++) {
    const text = `Round ${round}: Priya Raman met Jonas Weber in Lisbon.`;
    await between(round);
    ids.push((await ok<{ doc_id: string }>(post(alice, scope, 'remember', { content: text, source: 'memo' }))).doc_id);
    await between(round);
    const relate = { from: `Person ${round}`, to: 'Acme', type: 'works_at' };
    const { fact } = await ok<{ fact: { id: string; subject_id: string; object_id: string } }>(
      post(alice, scope, 'relate', relate),
    );
    ids.push(fact.id, fact.subject_id, fact.object_id);
    await between(round);
    const note = { key: `k${round}`, value: round, kind: 'user_fact' };
    ids.push((await ok<{ id: string }>(post(alice, scope, 'note_write', note))).id);
    await between(round);
    const capsule = { taskId: 't', summary: `step ${round}` };
    ids.push((await ok<{ id: string }>(post(alice, scope, 'handoff_create', capsule))).id);
  }
  for (const e of (await ok<Events>(post(alice, scope, 'history', { key: 'k2' }))).events) ids.push(e.seq);
  for (const e of (await ok<Events>(post(alice, scope, 'audit', { limit: 100 }))).events) ids.push(e.seq);
  for (const id of ids) expect(typeof id, `ids are decimal strings: ${ids}`).toBe('string');
  return ids.map((id) => BigInt(id));
}

const deltas = (ids: bigint[]) => ids.slice(1).map((id, i) => id - (ids[i] as bigint));

beforeAll(async () => {
  t = await startTestNode();
  alice = (await t.token({ agent: 'app', user: 'alice' })).token;
  bob = (await t.token({ agent: 'app', user: 'bob' })).token;
});
afterAll(() => t.stop());

describe('ids and history seq', () => {
  it('step the same for alice whether or not bob wrote in between', async () => {
    const alone = await aliceRounds('quiet', async () => {});
    const interleaved = await aliceRounds('busy', (round) => bobWrites(round + 1));
    expect(deltas(interleaved)).toEqual(deltas(alone));
    // Each scope counts on its own from 1, so even the values agree.
    expect(interleaved).toEqual(alone);
    expect(alone[0]).toBe(1n);
  });

  it('of one partition are distinct across families, and audit pages in commit order', async () => {
    const ids = await aliceRounds('distinct', async () => {});
    // Every id a round made (its object, Acme, is made once and named again after).
    const made = ids.slice(0, 18).filter((_, i) => i % 6 !== 3 || i === 3);
    expect(new Set(made).size).toBe(made.length);
    const { events } = await ok<Events>(post(alice, 'distinct', 'audit', { limit: 100 }));
    const seqs = events.map((e) => BigInt(e.seq));
    expect(seqs.length).toBeGreaterThan(10);
    expect(seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as bigint))).toBe(true);
  });
});
