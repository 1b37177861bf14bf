import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Found by an audit: relation types written in camel case (`childOf`, `marriedTo`, `partOf`)
// derived nothing, while `child_of`, `child-of` or `Child Of` derived their inverse, symmetric
// and transitive readings (DESIGN.md §2). The rules now read a lower-to-upper case step as a
// separator; the stored type keeps its spelling.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

type Fact = { subject: string; relation: string; object: string; derived?: boolean; rule?: string };

async function relate(from: string, type: string, to: string) {
  const r = await t.call('POST', '/v1/memory/relate', { body: { scope: 'camel', from, type, to } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { created: boolean; already: boolean };
}

async function facts(subject: string): Promise<Fact[]> {
  const r = await t.call('POST', '/v1/memory/recall', { body: { scope: 'camel', subject } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.facts as Fact[];
}

const derived = (all: Fact[]) =>
  all.filter((f) => f.derived).map((f) => [f.subject, f.relation, f.object, f.rule ?? null] as const);

it('Mei childOf Ana derives Ana parent_of Mei, as Mei child_of Ana does, and the stored type keeps its spelling', async () => {
  await relate('Mei', 'childOf', 'Ana');
  await relate('Lin', 'child_of', 'Bo');
  expect(derived(await facts('Ana'))).toEqual([['Ana', 'parent_of', 'Mei', 'inverse']]);
  expect(derived(await facts('Bo'))).toEqual([['Bo', 'parent_of', 'Lin', 'inverse']]);
  const stored = (await facts('Mei')).filter((f) => !f.derived);
  expect(stored.map((f) => [f.subject, f.relation, f.object])).toEqual([['Mei', 'childOf', 'Ana']]);
  // Said from the other end, in either spelling, it is the stored fact, not a second one.
  expect(await relate('Ana', 'parentOf', 'Mei')).toMatchObject({ created: false, already: true });
  expect(await relate('Ana', 'parent_of', 'Mei')).toMatchObject({ created: false, already: true });
  const around = (await facts('Ana')).filter((f) => !f.derived);
  expect(around.map((f) => [f.subject, f.relation, f.object])).toEqual([['Mei', 'childOf', 'Ana']]);
});

it('ownedBy and marriedTo read as owned_by and married_to from the other end', async () => {
  await relate('Van', 'ownedBy', 'Kim');
  await relate('Ed', 'marriedTo', 'Flo');
  expect(derived(await facts('Kim'))).toEqual([['Kim', 'owns', 'Van', 'inverse']]);
  expect(derived(await facts('Flo'))).toEqual([['Flo', 'marriedTo', 'Ed', 'symmetric']]);
});

it('partOf links chain as part_of links do', async () => {
  await relate('Room 1', 'partOf', 'Wing A');
  await relate('Wing A', 'partOf', 'Hall');
  expect(derived(await facts('Room 1'))).toEqual([['Room 1', 'partOf', 'Hall', 'transitive']]);
});
