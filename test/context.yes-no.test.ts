import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Found in QA through a real node (session 52): a passage answering a yes/no question with "no"
// in a sentence that leaves out who acts ("Windows is not supported yet.") was `related`, and
// "Our choice was Postgres." left "choose" uncovered.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  const bodies = [
    {
      content: 'Cairn Sync runs on macOS and Linux. Windows is not supported yet.',
      source: 'Cairn Sync FAQ',
      facts: { entities: [{ name: 'Cairn Sync', type: 'product' }] },
    },
    {
      content: 'Our choice was Postgres.',
      source: 'adr',
      facts: { entities: [{ name: 'Postgres', type: 'database' }] },
    },
  ];
  for (const body of bodies) {
    const r = await t.call('POST', '/v1/memory/remember', { body: { scope: 'yn', ...body } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

async function grounding(question: string): Promise<unknown> {
  const r = await t.call('POST', '/v1/memory/context', { body: { scope: 'yn', question } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.grounding;
}

describe('memory_context grounding of yes/no questions', () => {
  it('a passive saying no, naming no one, is read with the name the passage opens with', async () => {
    for (const q of ['Is Windows supported by Cairn Sync?', 'Does Cairn Sync support Windows?']) {
      expect(await grounding(q), q).toEqual({ verdict: 'grounded', uncovered: [] });
    }
  });

  it('asked the other way round, the relation word stays uncovered', async () => {
    expect(await grounding('Does Windows support Cairn Sync?')).toEqual({ verdict: 'related', uncovered: ['support'] });
  });

  it('a noun made from the verb covers it', async () => {
    expect(await grounding('Which database did we choose?')).toEqual({ verdict: 'grounded', uncovered: [] });
  });
});
