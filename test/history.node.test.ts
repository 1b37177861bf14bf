import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_history and audit through the real node: events show the records they keep in the reply
// spelling of every other verb (DESIGN.md §2: ids as decimal strings, times in ISO 8601).

let t: TestNode;
let token: string;

const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { token, body });

/** Every value under an id or time key, anywhere in `value`, with the path it was found at. */
function idsAndTimes(value: unknown, path = ''): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => idsAndTimes(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(/^(id|from|to|seq)$|_id$|_at$/.test(k) ? [[`${path}.${k}`, v] as [string, unknown]] : []),
    ...idsAndTimes(v, `${path}.${k}`),
  ]);
}

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const r = await post('remember', {
    content: 'Priya Raman works at Helios Corp.',
    source: 'memo',
    facts: {
      entities: [
        { name: 'Priya Raman', type: 'person' },
        { name: 'Helios Corp', type: 'company' },
      ],
      relations: [{ source: 'Priya Raman', target: 'Helios Corp', type: 'works_at' }],
    },
  });
  expect(r.status).toBe(200);
  expect((await post('relate', { from: 'Priya Raman', to: 'Oslo', type: 'lives_in', replaces: true })).status).toBe(
    200,
  );
  expect((await post('note_write', { key: 'editor', value: { theme: 'dark' }, kind: 'user_preference' })).status).toBe(
    200,
  );
});
afterAll(async () => t.stop());

describe('history and audit events', () => {
  it('show entity and fact records with ids as strings and times in ISO 8601', async () => {
    const ofFact = await post('history', { fact: { from: 'Priya Raman', to: 'Helios Corp', type: 'works_at' } });
    const replies = [await post('history', { subject: 'Helios Corp' }), ofFact, await post('audit', {})];
    for (const r of replies) {
      expect(r.status).toBe(200);
      const events = r.body.events as { family: string; after: unknown }[];
      expect(events.length).toBeGreaterThan(0);
      const found = idsAndTimes(events);
      expect(found.length).toBeGreaterThan(events.length);
      for (const [path, v] of found) expect([path, v === null || typeof v === 'string']).toEqual([path, true]);
    }
    const [first] = ofFact.body.events as { after: Record<string, unknown> }[];
    expect(first?.after).toMatchObject({ type: 'works_at', source: { kind: 'document' } });
    expect(first?.after.recorded_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("show a write's input as the caller sent it, without the node's own fields", async () => {
    const r = await post('history', { key: 'editor' });
    expect(r.status).toBe(200);
    const [event] = r.body.events as { patch: Record<string, unknown> }[];
    expect(event?.patch).toMatchObject({ key: 'editor', value: { theme: 'dark' } });
    expect(Object.keys(event?.patch ?? {})).not.toContain('allowPrivate');
  });
});

describe('event targets', () => {
  // The re-audit saw fact targets as "from\u0000type\u0000to": a reply carries no NUL; each
  // target is an object naming it the way a request does, the same in history and audit.
  it('are objects without NUL characters, alike in history and audit', async () => {
    const remember = await post('remember', {
      facts: { entities: [{ name: 'Ivo Petrov', type: 'person', attributes: { eyes: 'green', team: 'infra' } }] },
    });
    expect(remember.status).toBe(200);
    expect((await post('forget', { attribute: { subject: 'Ivo Petrov', key: 'eyes' } })).status).toBe(200);

    const ofFact = await post('history', { fact: { from: 'Priya Raman', to: 'Helios Corp', type: 'works_at' } });
    const audit = await post('audit', { limit: 100 });
    for (const r of [ofFact, audit, await post('history', { key: 'editor' })]) {
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).not.toContain('\\u0000');
    }
    const factTarget = { from: 'Priya Raman', type: 'works_at', to: 'Helios Corp' };
    expect((ofFact.body.events as { target: unknown }[]).map((e) => e.target)).toEqual([factTarget]);
    const targets = (audit.body.events as { family: string; target: unknown }[]).map((e) => [e.family, e.target]);
    expect(targets).toContainEqual(['fact', factTarget]);
    expect(targets).toContainEqual(['note', { key: 'editor', visibility: 'user' }]);
    expect(targets).toContainEqual(['entity', { name: 'Ivo Petrov' }]);
    expect(targets).toContainEqual(['forget', { form: 'attribute' }]);
  });
});
