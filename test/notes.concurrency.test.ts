import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Concurrency guarantees of notes through the real node (HTTP): compare-and-set with
// `expectedVersion` among many writers, and idempotent retries racing each other.

let t: TestNode;
let token: string;

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'writer' })).token;
});
afterAll(async () => t.stop());

const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { token, body });

interface Receipt {
  version: number;
  supersedes: number | null;
  evolution: string;
}

describe('N concurrent writers with expectedVersion on one key', () => {
  it('exactly one wins each version, none is lost, and history holds each win once, in order', async () => {
    const WRITERS = 8;
    const WINS = 4;
    const created = await post('note_write', {
      key: 'counter',
      value: { by: 'seed', n: 0 },
      kind: 'task_state',
      expectedVersion: 0,
    });
    expect(created.status).toBe(200);
    const wins: { writer: number; version: number; value: object }[] = [];
    let conflicts = 0;
    async function writer(w: number) {
      for (let round = 0; round < WINS; ) {
        const cur = await post('note_list', { key: 'counter' });
        const version = (cur.body.notes as { version: number }[])[0]?.version as number;
        const value = { by: `w${w}`, n: round };
        const r = await post('note_write', { key: 'counter', value, expectedVersion: version });
        if (r.status === 200) {
          const receipt = r.body as unknown as Receipt;
          expect(receipt.version).toBe(version + 1);
          expect(receipt.supersedes).toBe(version);
          wins.push({ writer: w, version: receipt.version, value });
          round++;
        } else {
          expect(r.status).toBe(409);
          expect(r.body.error?.code).toBe('VERSION_CONFLICT');
          const details = (r.body.error?.details ?? []) as { currentVersion?: number }[];
          const current = details[0]?.currentVersion;
          expect(current).toBeGreaterThan(version);
          conflicts++;
        }
      }
    }
    await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    const versions = wins.map((w) => w.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: WRITERS * WINS }, (_, i) => i + 2));
    const final = await post('note_list', { key: 'counter' });
    expect((final.body.notes as { version: number }[])[0]?.version).toBe(1 + WRITERS * WINS);
    // History: every write once, in version order, each with the winner's value.
    const events: { after?: { version?: number; value?: unknown } | null; op: string; seq: string }[] = [];
    let cursor: string | null = null;
    do {
      const page = await post('history', { key: 'counter', limit: 7, ...(cursor === null ? {} : { cursor }) });
      expect(page.status).toBe(200);
      events.push(...(page.body.events as typeof events));
      cursor = page.body.nextCursor as string | null;
    } while (cursor !== null);
    expect(events).toHaveLength(1 + WRITERS * WINS);
    const byVersion = new Map(wins.map((w) => [w.version, w.value]));
    events.forEach((e, i) => {
      expect(e.after?.version).toBe(i + 1);
      if (i > 0) expect(e.after?.value).toEqual(byVersion.get(i + 1));
    });
    const seqs = events.map((e) => BigInt(e.seq));
    expect([...seqs].sort((a, b) => (a < b ? -1 : 1))).toEqual(seqs);
    // With eight writers racing, some must have lost a round (else the test proves nothing).
    expect(conflicts).toBeGreaterThan(0);
  });

  it('expectedVersion 0 creates only once among racing creators', async () => {
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post('note_write', { key: 'once', value: i, kind: 'decision', expectedVersion: 0 }),
      ),
    );
    expect(racers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of racers.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body.error?.details).toEqual([expect.objectContaining({ currentVersion: 1 })]);
    }
  });
});

describe('idempotent retries under concurrency', () => {
  it('the same key and body racing: one version, one event, the same receipt for all', async () => {
    const body = { key: 'retry', value: { step: 'deploy' }, kind: 'task_state', idempotencyKey: 'req-1' };
    const before = await t.txn();
    const replies = await Promise.all(Array.from({ length: 10 }, () => post('note_write', body)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    // One call stored the note; every other one replayed its receipt and says so.
    const stored = replies.filter((r) => r.body.replayed === undefined);
    expect(stored).toHaveLength(1);
    const first = stored[0]?.body;
    for (const r of replies.filter((r) => r !== stored[0])) expect(r.body).toEqual({ ...first, replayed: true });
    expect(first).toMatchObject({ version: 1, evolution: 'created' });
    expect(await t.txn()).not.toBe(before);
    const history = await post('history', { key: 'retry' });
    expect(history.body.events).toHaveLength(1);
    // Key order does not make a different body; another value does, and changes nothing.
    const reordered = await post('note_write', {
      idempotencyKey: 'req-1',
      kind: 'task_state',
      value: { step: 'deploy' },
      key: 'retry',
    });
    expect(reordered.body).toEqual({ ...first, replayed: true });
    const txn = await t.txn();
    const other = await post('note_write', { ...body, value: { step: 'rollback' } });
    expect(other.status).toBe(409);
    expect(other.body.error?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(await t.txn()).toBe(txn);
  });

  it('a retry of a CAS write that succeeded gets its receipt back, not a version conflict', async () => {
    await post('note_write', { key: 'cas-retry', value: 1, kind: 'task_state' });
    const body = { key: 'cas-retry', value: 2, expectedVersion: 1, idempotencyKey: 'cas-1' };
    const [a, b] = await Promise.all([post('note_write', body), post('note_write', body)]);
    expect(a?.status).toBe(200);
    expect(b?.status).toBe(200);
    const [stored, replay] = a?.body.replayed === true ? [b, a] : [a, b];
    expect(stored?.body.replayed).toBeUndefined();
    expect(replay?.body).toEqual({ ...stored?.body, replayed: true });
    expect(stored?.body).toMatchObject({ version: 2 });
  });
});

describe('as_of reads over notes', () => {
  it('reads each note as it stood then, with its version and supersedes', async () => {
    await post('note_write', { key: 'stack', value: 'mysql', kind: 'decision' });
    await new Promise((r) => setTimeout(r, 20));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await post('note_write', { key: 'stack', value: 'postgres' });
    const then = await post('note_list', { key: 'stack', as_of: between });
    expect(then.body.notes).toEqual([expect.objectContaining({ value: 'mysql', version: 1, supersedes: null })]);
    const now = await post('note_list', { key: 'stack' });
    expect(now.body.notes).toEqual([expect.objectContaining({ value: 'postgres', version: 2, supersedes: 1 })]);
    const bad = await post('note_list', { key: 'stack', as_of: 'yesterday' });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.message).toMatch(/as_of/);
  });
});
