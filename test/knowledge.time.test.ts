import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Valid time over HTTP, with the calls of the black-box audit (issue 3 item 6): `replaces` ends
// the other edge in valid time at the call's date, a restore starts a new interval, older news
// ends when the newer starts, re-asserting an ended edge restores that fact, and valid_at compares
// instants, not text.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

const relate = async (body: Record<string, unknown>) => {
  const r = await t.call('POST', '/v1/memory/relate', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as {
    fact: Record<string, unknown>;
    created: boolean;
    ended: Record<string, unknown>[];
    restored: { id: string; ended_at?: string }[];
  };
};

const objects = async (subject: string, extra: Record<string, unknown> = {}) => {
  const r = await t.call('POST', '/v1/memory/recall', { body: { subject, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  // The stored facts: derived readings (Kai Moss managed_by Jonas Weber) are checked on their own.
  return ((r.body.facts ?? []) as { object: string; derived?: boolean }[])
    .filter((f) => !f.derived)
    .map((f) => f.object);
};

describe('replaces in valid time', () => {
  it('answers the intervals the user stated, in any order of calls', async () => {
    const paris = await relate({
      from: 'Ana',
      to: 'Paris',
      type: 'lives_in',
      attributes: { valid_from: '2020-01-01' },
    });
    const berlin = await relate({ from: 'Ana', to: 'Berlin', type: 'lives_in', replaces: true, date: '2023-03-01' });
    expect(berlin.ended.map((f) => f.id)).toEqual([paris.fact.id]);
    expect(berlin.ended[0]?.valid_to).toBe('2023-03-01');
    expect(typeof berlin.ended[0]?.ended_at).toBe('string');
    expect(await objects('Ana', { valid_at: '2021-06-01' })).toEqual(['Paris']);

    const back = await relate({ from: 'Ana', to: 'Paris', type: 'lives_in', replaces: true, date: '2025-01-01' });
    expect(back.restored.map((f) => f.id)).toEqual([paris.fact.id]);
    expect(back.fact.valid_from).toBe('2025-01-01');
    const rome = await relate({ from: 'Ana', to: 'Rome', type: 'lives_in', replaces: true, date: '2010-01-01' });
    expect(rome.ended).toEqual([]);
    expect(rome.fact.valid_to).toBe('2020-01-01');

    expect(await objects('Ana', { valid_at: '2015-01-01' })).toEqual(['Rome']);
    expect(await objects('Ana', { valid_at: '2021-06-01' })).toEqual(['Paris']);
    expect(await objects('Ana', { valid_at: '2024-01-01' })).toEqual(['Berlin']);
    expect(await objects('Ana', { valid_at: '2026-01-01' })).toEqual(['Paris']);
    expect(await objects('Ana')).toEqual(['Paris']);
  });
});

describe('re-asserting an ended edge', () => {
  // The audit's calls (finding 6): Oslo, Bergen replacing it, then Oslo again without replaces.
  const history = async (fact: Record<string, string>) => {
    const r = await t.call('POST', '/v1/memory/history', { body: { fact } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.events as { op: string }[]).map((e) => e.op);
  };

  it('restores that fact, live once, and says so', async () => {
    const oslo = await relate({ from: 'Cy', to: 'Oslo', type: 'lives_in' });
    await relate({ from: 'Cy', to: 'Bergen', type: 'lives_in', replaces: true });
    const back = await relate({ from: 'Cy', to: 'Oslo', type: 'lives_in' });
    expect(back.created).toBe(false);
    expect(back.fact.id).toBe(oslo.fact.id);
    expect(back.restored.map((f) => f.id)).toEqual([oslo.fact.id]);
    expect(back.restored[0]?.ended_at).toBeUndefined();
    expect((await objects('Cy')).sort()).toEqual(['Bergen', 'Oslo']);
    expect(await objects('Cy', { valid_at: '2020-01-01' })).toEqual(['Oslo']);
    expect(await history({ from: 'cy', to: 'OSLO', type: 'Lives_In' })).toEqual(['assert', 'end', 'restore']);
  });

  it('restores it from the date it is said again', async () => {
    const globex = await relate({ from: 'Ann', to: 'Globex', type: 'works_at', date: '2020-01-01' });
    await relate({ from: 'Ann', to: 'Initech', type: 'works_at', replaces: true, date: '2022-01-01' });
    const back = await relate({ from: 'Ann', to: 'Globex', type: 'works_at', date: '2024-01-01' });
    expect(back.fact.id).toBe(globex.fact.id);
    expect(back.fact.valid_from).toBe('2024-01-01');
    expect(back.restored[0]?.ended_at).toBeUndefined();
    expect(await objects('Ann', { valid_at: '2021-01-01' })).toEqual(['Globex']);
    expect(await objects('Ann', { valid_at: '2023-01-01' })).toEqual(['Initech']);
    expect((await objects('Ann', { valid_at: '2025-01-01' })).sort()).toEqual(['Globex', 'Initech']);
  });
});

describe('valid_at compares instants', () => {
  it('reads the same instant in two zones alike', async () => {
    await relate({
      from: 'Zed',
      to: 'Tokyo',
      type: 'visits',
      attributes: { valid_from: '2024-01-01T10:00:00+05:00', valid_to: '2024-01-01T12:00:00+05:00' },
    });
    expect(await objects('Zed', { valid_at: '2024-01-01T06:00:00Z' })).toEqual(['Tokyo']);
    expect(await objects('Zed', { valid_at: '2024-01-01T11:00:00+05:00' })).toEqual(['Tokyo']);
    expect(await objects('Zed', { valid_at: '2024-01-01T07:00:00Z' })).toEqual([]);
  });

  it('refuses an interval that ends before it starts, naming valid_to, and writes nothing', async () => {
    const before = await t.txn();
    const r = await t.call('POST', '/v1/memory/relate', {
      body: {
        from: 'Zoe',
        to: 'Oslo',
        type: 'visits',
        attributes: { valid_from: '2024-01-01', valid_to: '2023-01-01' },
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.error?.code).toBe('VALIDATION_ERROR');
    expect(r.body.error?.message).toContain('valid_to');
    expect(await t.txn()).toBe(before);
  });
});

describe('a plain read means now', () => {
  // The re-audit's cases: a fact stored as older news that is true today, and one dated to start
  // later. Without as_of and valid_at, recall and context answer what is known and true now.
  it('shows older news true today and hides a fact that starts later, which valid_at then finds', async () => {
    await relate({ from: 'Jonas Weber', to: 'Priya Raman', type: 'manages', replaces: true, date: '2099-01-01' });
    const kai = await relate({
      from: 'Jonas Weber',
      to: 'Kai Moss',
      type: 'manages',
      replaces: true,
      date: '2020-01-01',
    });
    expect(kai.fact.valid_to).toBe('2099-01-01');
    expect(typeof kai.fact.ended_at).toBe('string');

    expect(await objects('Jonas Weber')).toEqual(['Kai Moss']);
    expect(await objects('Jonas Weber', { valid_at: '2099-06-01' })).toEqual(['Priya Raman']);
    expect(await objects('Priya Raman')).toEqual([]);
    const kaiRecall = await t.call('POST', '/v1/memory/recall', { body: { subject: 'Kai Moss' } });
    const derived = (kaiRecall.body.facts as { derived?: boolean; relation: string; object: string }[]).filter(
      (f) => f.derived,
    );
    expect(derived.map((f) => [f.relation, f.object])).toEqual([['managed_by', 'Jonas Weber']]);

    const facts = async (extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', '/v1/memory/context', {
        body: { question: 'Who does Jonas Weber manage?', ...extra },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as { kind: string; text: string }[]).filter((i) => i.kind === 'fact').map((i) => i.text);
    };
    // Each with its inverse reading, derived from what is true at the same moment, after it.
    expect(await facts()).toEqual(['Jonas Weber manages Kai Moss', 'Kai Moss managed_by Jonas Weber']);
    expect(await facts({ valid_at: '2099-06-01' })).toEqual([
      'Jonas Weber manages Priya Raman',
      'Priya Raman managed_by Jonas Weber',
    ]);
  });
});

describe('attributes in time', () => {
  it('recall by attribute and context entity items use the values of as_of / valid_at', async () => {
    const lena = (role: string, date: string) => ({
      facts: { entities: [{ name: 'Lena Hart', type: 'person', attributes: { role } }] },
      date,
    });
    for (const body of [lena('intern', '2022-01-01'), lena('engineer', '2024-01-01')]) {
      const r = await t.call('POST', '/v1/memory/remember', { body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const byRole = async (value: string, extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { attribute: { key: 'role', value }, ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { state: string; subject: { name: string; attributes: Record<string, unknown> } | null };
    };
    expect((await byRole('intern')).state).toBe('nothing_stored');
    const then = await byRole('intern', { valid_at: '2023-01-01' });
    expect(then.subject?.name).toBe('Lena Hart');
    expect(then.subject?.attributes).toEqual({ role: 'intern' });
    expect((await byRole('engineer', { valid_at: '2023-01-01' })).state).toBe('nothing_stored');

    const entity = async (extra: Record<string, unknown>) => {
      const r = await t.call('POST', '/v1/memory/context', { body: { question: 'Who is Lena Hart?', ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as { kind: string; attributes?: Record<string, unknown> }[]).find(
        (i) => i.kind === 'entity',
      );
    };
    expect((await entity({}))?.attributes).toEqual({ role: 'engineer' });
    expect((await entity({ valid_at: '2023-01-01' }))?.attributes).toEqual({ role: 'intern' });
  });

  // The audit's calls: a fact's attribute said again with a later date held from that date, not
  // over the whole fact (recall valid_at 2021 said CTO).
  it("a fact's attributes hold from the date each was stated", async () => {
    const scope = 'fact-attrs';
    for (const [role, date] of [
      ['engineer', '2020-01-01'],
      ['CTO', '2023-01-01'],
    ]) {
      await relate({ scope, from: 'Ann', to: 'Acme', type: 'works_at', attributes: { role }, date });
    }
    const role = async (extra: Record<string, unknown>) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { scope, subject: 'Ann', ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const facts = r.body.facts as { relation: string; attributes: Record<string, unknown> }[];
      return facts.find((f) => f.relation === 'works_at')?.attributes;
    };
    expect(await role({ valid_at: '2021-06-01' })).toEqual({ role: 'engineer' });
    expect(await role({ valid_at: '2024-06-01' })).toEqual({ role: 'CTO' });
    expect(await role({})).toEqual({ role: 'CTO' });
  });
});

describe('a read whose time sees none of the facts', () => {
  // The audit's case: a subject whose facts all lie outside the read's time answered `answered`
  // with no facts and no hint. `outside_time` says how many there are and when to read instead.
  it('says how many facts lie outside it and when, counting only the caller’s own', async () => {
    const recall = async (body: Record<string, unknown>) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { scope: 'hint', ...body } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { state: string; facts: { object: string }[]; outside_time?: Record<string, unknown> };
    };
    const created = await t.call('POST', '/v1/memory/remember', {
      body: { scope: 'hint', facts: { entities: [{ name: 'Mira Holm', type: 'person' }] } },
    });
    expect(created.status).toBe(200);
    const beforeFacts = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await relate({
      scope: 'hint',
      from: 'Mira Holm',
      to: 'Oslo',
      type: 'moves_to',
      attributes: { valid_from: '2999-01-01' },
    });
    await relate({
      scope: 'hint',
      from: 'Mira Holm',
      to: 'Bergen',
      type: 'visits',
      attributes: { valid_from: '2990-05-01' },
    });
    // Another user's facts about the same name are not counted, nor named.
    const bob = await t.call('POST', '/v1/memory/relate', {
      body: {
        scope: 'hint',
        user_id: 'bob',
        from: 'Mira Holm',
        to: 'Rome',
        type: 'visits',
        attributes: { valid_from: '2950-01-01' },
      },
    });
    expect(bob.status).toBe(200);

    const plain = await recall({ subject: 'Mira Holm' });
    expect(plain).toMatchObject({ state: 'answered', facts: [] });
    expect(plain.outside_time).toEqual({ facts: 2, next_valid_from: '2990-05-01' });
    const past = await recall({ subject: 'Mira Holm', valid_at: '2000-01-01' });
    expect(past.outside_time).toEqual({ facts: 2, next_valid_from: '2990-05-01' });
    // Read at the time it names, the facts show and the hint goes.
    const then = await recall({ subject: 'Mira Holm', valid_at: '2990-05-01' });
    expect(then.facts.map((f) => f.object)).toEqual(['Bergen']);
    expect(then.outside_time).toBeUndefined();

    const early = await recall({ subject: 'Mira Holm', as_of: beforeFacts });
    expect(early).toMatchObject({ state: 'answered', facts: [] });
    expect(early.outside_time?.facts).toBe(2);
    expect(Date.parse(early.outside_time?.next_recorded_at as string)).toBeGreaterThan(Date.parse(beforeFacts));
    const beforeAll = await recall({ subject: 'Mira Holm', as_of: '2000-01-01T00:00:00Z' });
    expect(beforeAll).toMatchObject({ state: 'nothing_stored', outside_time: { facts: 2 } });

    // No hint when the facts show, nor for a subject with none, nor for a name only another user holds.
    expect((await recall({ subject: 'Oslo', valid_at: '3000-01-01' })).outside_time).toBeUndefined();
    const alone = await t.call('POST', '/v1/memory/remember', {
      body: { scope: 'hint', facts: { entities: [{ name: 'Lone Entity', type: 'thing' }] } },
    });
    expect(alone.status, JSON.stringify(alone.body)).toBe(200);
    expect((await recall({ subject: 'Lone Entity' })).outside_time).toBeUndefined();
    const bobOnly = await t.call('POST', '/v1/memory/recall', {
      body: { scope: 'hint', subject: 'Rome', as_of: '2000-01-01T00:00:00Z' },
    });
    expect(bobOnly.body).toMatchObject({ state: 'nothing_stored' });
    expect(bobOnly.body.outside_time).toBeUndefined();
  });
});

describe('a partial name read before its entity was recorded', () => {
  // Found by a review: `as_of` before anything of "Priya Raman" was stored answered an exact name
  // `nothing_stored` with `outside_time`, but "Priya" (a word of it) or "Priya Ramen" (a near
  // spelling) `nothing_stored` with no hint, as if nothing about her were ever stored.
  it('carries the hint with the name it matched, for the caller’s own names only', async () => {
    const recall = async (body: Record<string, unknown>) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { scope: 'partial', ...body } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as { state: string; outside_time?: Record<string, unknown> };
    };
    const before = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    await relate({ scope: 'partial', from: 'Priya Raman', to: 'Northwind', type: 'works_at' });
    expect(await recall({ subject: 'Priya' })).toMatchObject({ state: 'answered' });

    for (const [subject, matched] of [
      ['Priya', 'word'],
      ['Priya Ramen', 'near'],
    ]) {
      const early = await recall({ subject, as_of: before });
      expect(early, subject).toMatchObject({
        state: 'nothing_stored',
        outside_time: { facts: 1, name: 'Priya Raman', matched },
      });
      expect(Date.parse(early.outside_time?.next_recorded_at as string)).toBeGreaterThan(Date.parse(before));
    }
    // The exact name's hint is as it was: the name is the one asked.
    const exact = await recall({ subject: 'Priya Raman', as_of: before });
    expect(exact.outside_time).toEqual({ facts: 1, next_recorded_at: expect.any(String) });

    // Another user's name, and the caller's own in another scope, are neither counted nor named.
    const bob = await t.call('POST', '/v1/memory/relate', {
      body: { scope: 'partial', user_id: 'bob', from: 'Tomas Berg', to: 'Rome', type: 'visits' },
    });
    expect(bob.status, JSON.stringify(bob.body)).toBe(200);
    await relate({ scope: 'partial-other', from: 'Ingrid Dahl', to: 'Oslo', type: 'visits' });
    for (const subject of ['Tomas', 'Tomas Berg', 'Ingrid', 'Ingrid Dahl']) {
      const r = await recall({ subject, as_of: before });
      expect(r.state, subject).toBe('nothing_stored');
      expect(r.outside_time, subject).toBeUndefined();
    }
  });
});

describe('saying a live fact again', () => {
  // The audit's calls (scope `dup2`): a later date confirms the fact; an earlier one extends it from
  // now on, and a read `as_of` a time between the calls sees the fact as it was known then.
  it('confirms at a later date, extends at an earlier one, and as_of reads what was known then', async () => {
    const scope = 'dup2';
    const knows = (date: string) => ({ scope, from: 'Ann', to: 'Bo', type: 'knows', date });
    const first = await relate(knows('2020-01-01'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const between = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = (await relate(knows('2023-01-01'))) as { already?: boolean; fact: Record<string, unknown> };
    expect(later.already).toBe(true);
    expect(later.fact.valid_from).toBe('2020-01-01');

    const facts = async (extra: Record<string, unknown>) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { scope, subject: 'Ann', ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.facts as { id: string; valid_from: string | null }[];
    };
    expect((await facts({ valid_at: '2021-06-01' })).map((f) => f.valid_from)).toEqual(['2020-01-01']);
    expect((await facts({ valid_at: '2021-06-01', as_of: between })).map((f) => f.valid_from)).toEqual(['2020-01-01']);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const beforeEarlier = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const earlier = (await relate(knows('2019-01-01'))) as { already?: boolean; fact: Record<string, unknown> };
    expect(earlier.already).toBe(false);
    expect([earlier.fact.id, earlier.fact.valid_from]).toEqual([first.fact.id, '2019-01-01']);
    expect((await facts({ valid_at: '2019-06-01' })).map((f) => f.id)).toEqual([first.fact.id]);
    expect(await facts({ valid_at: '2019-06-01', as_of: beforeEarlier })).toEqual([]);
    expect((await facts({ as_of: beforeEarlier })).map((f) => [f.id, f.valid_from])).toEqual([
      [first.fact.id, '2020-01-01'],
    ]);

    const history = await t.call('POST', '/v1/memory/history', {
      body: { scope, fact: { from: 'Ann', to: 'Bo', type: 'knows' } },
    });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    // The confirmation is no event; the extension is one.
    expect((history.body.events as { op: string }[]).map((e) => e.op)).toEqual(['assert', 'merge']);
  });
});

describe('derived facts in time', () => {
  // The audit's chain: L1 part_of L2 … L9 from 2020, then L3 part_of X from 2022 replacing L3
  // part_of L4. A derived fact holds where every fact it rests on holds.
  it('reports the span where the whole chain holds', async () => {
    const scope = 'chain';
    for (let i = 1; i < 9; i++) {
      await relate({ scope, from: `L${i}`, to: `L${i + 1}`, type: 'part_of', date: '2020-01-01' });
    }
    await relate({ scope, from: 'L3', to: 'X', type: 'part_of', date: '2022-01-01', replaces: true });
    const derived = async (extra: Record<string, unknown> = {}) => {
      const r = await t.call('POST', '/v1/memory/recall', { body: { scope, subject: 'L1', ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.facts as { derived?: boolean; object: string; valid_from: string; valid_to: string | null }[])
        .filter((f) => f.derived)
        .map((f) => [f.object, f.valid_from, f.valid_to]);
    };
    expect(await derived()).toContainEqual(['X', '2022-01-01', null]);
    const then = await derived({ valid_at: '2021-01-01' });
    expect(then).toContainEqual(['L4', '2020-01-01', '2022-01-01']);
    expect(then.map((d) => d[0])).not.toContain('X');
  });
});
