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
