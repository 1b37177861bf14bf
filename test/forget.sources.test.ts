import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The audit's repro (s30 defect 4, attributes) through a real node: a value sent again under a
// second source label is that label's statement too, so forgetting one label keeps it, forgetting
// the other finds it, and forgetting both takes it.

let t: TestNode;
let token: string;

const post = async (verb: string, body: Record<string, unknown>) => {
  const r = await t.call('POST', `/v1/memory/${verb}`, { token, body: { scope: 'sources', ...body } });
  return { status: r.status, body: r.body as Record<string, unknown> };
};
const joe = (source: string, date: string) => ({
  source,
  date,
  facts: { entities: [{ name: 'Jonas Berg', type: 'person', attributes: { nickname: 'Joe' } }] },
});
const attributes = async () =>
  ((await post('recall', { subject: 'Jonas Berg' })).body.subject as { attributes: unknown }).attributes;
const keptAttributes = (reply: { body: Record<string, unknown> }) =>
  (reply.body.kept as { what: string; count: number }[]).find((k) => k.what === 'attributes')?.count ?? 0;

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude' })).token;
});
afterAll(() => t.stop());

describe('an attribute stated under two source labels', () => {
  it('stays while either label is left, and goes with the last', async () => {
    expect((await post('remember', joe('hr', '2023-05-05'))).body.already).toBe(false);
    expect((await post('remember', joe('press', '2023-06-06'))).body.already).toBe(false);
    expect((await post('remember', joe('press', '2023-07-07'))).body.already).toBe(true);

    const hr = await post('forget', { source: 'hr' });
    expect([hr.status, (hr.body.forgotten as { attributes: number }).attributes, keptAttributes(hr)]).toEqual([
      200, 0, 1,
    ]);
    expect(await attributes()).toEqual({ nickname: 'Joe' });

    const press = await post('forget', { source: 'press' });
    expect([press.status, (press.body.forgotten as { attributes: number }).attributes]).toEqual([200, 1]);
    expect(await attributes()).toEqual({});
    expect((await post('forget', { source: 'press' })).body.state).toBe('already_forgotten');
    const history = JSON.stringify((await post('history', { subject: 'Jonas Berg' })).body);
    expect(history).not.toMatch(/Joe|press|"hr"/);
  });
});

// The fact half (audit s30 defect 4): a fact said again under a second source is that source's
// too, so forgetting one keeps it citing the other, and forgetting the other takes it.
const berlin = (source: string) => ({ from: 'Acme', to: 'Berlin', type: 'located_in', source });
const citations = async () =>
  ((await post('recall', { subject: 'Acme' })).body.facts as { citation: { source: { name: unknown } } }[]).map(
    (f) => f.citation.source.name,
  );
const keptFacts = (reply: { body: Record<string, unknown> }) =>
  (reply.body.kept as { what: string; count: number; why: string }[]).find((k) => k.what === 'facts');

describe('a fact stated under two source labels', () => {
  it('stays while either label is left, citing it, and goes with the last', async () => {
    expect((await post('relate', berlin('press'))).body.created).toBe(true);
    expect((await post('relate', berlin('wiki'))).body.already).toBe(false);
    expect((await post('relate', berlin('wiki'))).body.already).toBe(true);
    const fact = { from: 'Acme', to: 'Berlin', type: 'located_in' };
    const ops = ((await post('history', { fact })).body.events as { op: string }[]).map((e) => e.op);
    expect(ops).toEqual(['assert', 'merge']);

    const press = await post('forget', { source: 'press' });
    expect([press.status, (press.body.forgotten as { facts: number }).facts]).toEqual([200, 0]);
    expect(keptFacts(press)?.why).toMatch(/another source states them too/);
    expect(await citations()).toEqual(['wiki']);
    expect(JSON.stringify((await post('history', { fact })).body)).not.toMatch(/press/);

    const wiki = await post('forget', { source: 'wiki' });
    expect([wiki.status, (wiki.body.forgotten as { facts: number }).facts]).toEqual([200, 1]);
    expect(await citations()).toEqual([]);
    expect((await post('forget', { source: 'press' })).body.state).toBe('already_forgotten');
  });
});
