import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The audit's repro (s30 defect 3) through a real node: a fact stated from the other end of a
// symmetric or inverse type, which relate calls already stored, is the stored fact for forget and
// history too; a fact never stored is a 404 for both.

let t: TestNode;
let token: string;

const post = async (verb: string, body: Record<string, unknown>) => {
  const r = await t.call('POST', `/v1/memory/${verb}`, { token, body: { scope: 'family', ...body } });
  return { status: r.status, body: r.body as Record<string, unknown> };
};
const fact = (from: string, type: string, to: string) => ({ from, to, type });

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude' })).token;
  for (const [stored, other] of [
    [fact('Ana Silva', 'married_to', 'Bruno Costa'), fact('Bruno Costa', 'married_to', 'Ana Silva')],
    [fact('Ana Silva', 'parent_of', 'Mei Chen'), fact('Mei Chen', 'child_of', 'Ana Silva')],
    [fact('Northwind Labs', 'employs', 'Priya Raman'), fact('Priya Raman', 'employed_by', 'Northwind Labs')],
  ]) {
    expect((await post('relate', { ...stored })).body.created).toBe(true);
    expect((await post('relate', { ...other })).body.already).toBe(true);
  }
});
afterAll(() => t.stop());

describe('a fact named from its other end', () => {
  it('has the stored history, and forgetting it takes the stored fact', async () => {
    const readings = [
      fact('Bruno Costa', 'married_to', 'Ana Silva'),
      fact('Mei Chen', 'child_of', 'Ana Silva'),
      fact('Priya Raman', 'employed_by', 'Northwind Labs'),
    ];
    for (const reading of readings) {
      const history = await post('history', { fact: reading });
      expect([reading, history.status]).toEqual([reading, 200]);
      expect((history.body.events as { op: string; target: unknown }[]).map((e) => [e.op, e.target])).toHaveLength(1);
    }
    for (const reading of readings) {
      const gone = await post('forget', { fact: reading });
      expect([reading, gone.status, gone.body.state, gone.body.forgotten]).toMatchObject([
        reading,
        200,
        'forgotten',
        { facts: 1 },
      ]);
      expect((await post('forget', { fact: reading })).body.state).toBe('already_forgotten');
    }
    for (const subject of ['Ana Silva', 'Priya Raman']) {
      expect((await post('recall', { subject })).body.facts).toEqual([]);
    }
    // Forgotten from the other end, the stored reading is already forgotten and has no events.
    const stored = fact('Ana Silva', 'married_to', 'Bruno Costa');
    expect((await post('forget', { fact: stored })).body.state).toBe('already_forgotten');
    expect(await post('history', { fact: stored })).toMatchObject({ status: 200, body: { events: [] } });
  });

  it('is a 404 for history as for forget when it was never stored', async () => {
    await post('relate', fact('Lena Berg', 'parent_of', 'Tom Berg'));
    for (const never of [fact('Lena Berg', 'child_of', 'Tom Berg'), fact('Lena Berg', 'married_to', 'Nobody Here')]) {
      for (const verb of ['history', 'forget']) {
        const r = await post(verb, { fact: never });
        expect([verb, never, r.status, (r.body.error as { code: string }).code]).toEqual([
          verb,
          never,
          404,
          'NOT_FOUND',
        ]);
      }
    }
    const kept = await post('history', { fact: fact('Tom Berg', 'child_of', 'Lena Berg') });
    expect((kept.body.events as { op: string }[]).map((e) => e.op)).toEqual(['assert']);
  });
});
