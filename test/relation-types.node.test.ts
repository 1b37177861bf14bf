import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Agents spell one relation type many ways; through the node each spelling of a stored type is
// that type, so two agents saying the same thing leave one fact (docs/design/knowledge-verbs.md).

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => t.stop());

it('two agents spelling a type differently state one fact, shown in the stored spelling', async () => {
  const claude = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
  const post = (token: string, verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { token, body });
  const first = await post(claude, 'relate', { from: 'Priya Raman', to: 'Helios Corp', type: 'works_at' });
  expect(first.status).toBe(200);
  const second = await post(codex, 'remember', {
    facts: { relations: [{ source: 'Priya Raman', target: 'Helios Corp', type: 'worksAt' }] },
  });
  expect(second.status).toBe(200);
  expect(second.body).toMatchObject({ already: true, stored: { relations: 0 } });
  const third = await post(codex, 'relate', { from: 'priya raman', to: 'Helios Corp', type: 'Works at' });
  const id = (first.body as { fact: { id: string } }).fact.id;
  expect(third.body).toMatchObject({ already: true, fact: { id, relation: 'works_at' } });
  const recall = (await post(claude, 'recall', { subject: 'Priya Raman' })).body as { facts: { relation: string }[] };
  expect(recall.facts.map((f) => f.relation)).toEqual(['works_at']);
  const status = (await post(codex, 'status', { scope: 'default' })).body as { ontology: { relation_types: unknown } };
  expect(status.ontology.relation_types).toEqual([{ type: 'works_at', count: 1 }]);
});
