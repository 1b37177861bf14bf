import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// What a model sees through the real node when it misspells a name (audit s31): a write that
// creates a second entity says so, history and recall answer a miss with the names meant, and
// recall says when facts were left out. Only the caller's own partition is ever offered.

let t: TestNode;
let token: string;
let otherToken: string;
let client: Client;

const post = (verb: string, body: object, as = token) => t.call('POST', `/v1/memory/${verb}`, { token: as, body });

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'alice' })).token;
  otherToken = (await t.token({ agent: 'claude', user: 'bob' })).token;
  client = await mcpClient(t.url, token);
  const first = await post('relate', { scope: 'dup', from: 'Priya Raman', to: 'Acme Robotics', type: 'works_at' });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(first.body.possible_duplicates).toEqual([]);
  // Reads of misses in a scope of their own, which the writes below add no near spelling to.
  await post('relate', { scope: 'miss', from: 'Priya Raman', to: 'Acme Robotics', type: 'works_at' });
  // Another user's near spellings are never offered to alice.
  for (const scope of ['dup', 'miss']) {
    await post('relate', { scope, from: 'Priya Rao', to: 'Acme Robotics Group', type: 'works_at' }, otherToken);
  }
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

describe('a misspelled name', () => {
  it('relate and remember keep the new entity and name the stored one it is spelled like', async () => {
    const relate = await post('relate', { scope: 'dup', from: 'Priya Ramen', to: 'Porto', type: 'born_in' });
    expect(relate.status, JSON.stringify(relate.body)).toBe(200);
    expect(relate.body.created).toBe(true);
    const subject = (relate.body.fact as { subject_id: string }).subject_id;
    expect(relate.body.possible_duplicates).toEqual([
      { name: 'Priya Ramen', id: subject, similar_to: { name: 'Priya Raman', id: expect.any(String) } },
    ]);
    const remember = await post('remember', {
      scope: 'dup',
      facts: { relations: [{ source: 'Acme Robotics Inc', target: 'Porto', type: 'located_in' }] },
    });
    expect(remember.status, JSON.stringify(remember.body)).toBe(200);
    const dups = remember.body.possible_duplicates as { name: string; similar_to: { name: string } }[];
    expect(dups.map((d) => [d.name, d.similar_to.name])).toEqual([['Acme Robotics Inc', 'Acme Robotics']]);
    // The same over MCP, and the tool description tells a model to check it.
    const mcp = await client.callTool({
      name: 'memory_relate',
      arguments: { scope: 'dup', from: 'Pryia Raman', to: 'Lisbon', type: 'visited' },
    });
    const { isError, body } = toolJson(mcp);
    expect(isError).toBe(false);
    expect((body.possible_duplicates as { similar_to: { name: string } }[])[0]?.similar_to.name).toBe('Priya Raman');
    const { tools } = await client.listTools();
    for (const name of ['memory_relate', 'memory_remember']) {
      expect(tools.find((x) => x.name === name)?.description).toMatch(/possible_duplicates/);
    }
  });

  it('history of a subject or note never stored is 404 with the names meant; a fact may be named by id', async () => {
    for (const [subject, meant] of [
      ['Priya', ['Priya Raman']],
      ['Dr. Priya Raman', ['Priya Raman']],
      ['Nobody Here', []],
    ] as const) {
      const r = await post('history', { scope: 'miss', subject });
      expect([subject, r.status], JSON.stringify(r.body)).toEqual([subject, 404]);
      const error = r.body.error as { code: string; details?: { did_you_mean: string }[] };
      expect(error.code).toBe('NOT_FOUND');
      expect((error.details ?? []).map((d) => d.did_you_mean)).toEqual(meant);
    }
    const note = await post('history', { scope: 'miss', key: 'nonexistent-note' });
    expect(note.status, JSON.stringify(note.body)).toBe(404);
    const recalled = await post('recall', { scope: 'miss', subject: 'Priya Raman' });
    const fact = (recalled.body.facts as { id: string; relation: string }[]).find((f) => f.relation === 'works_at');
    const byId = await post('history', { scope: 'miss', fact: { id: fact?.id } });
    expect(byId.status, JSON.stringify(byId.body)).toBe(200);
    expect((byId.body.events as { op: string }[]).map((e) => e.op)).toEqual(['assert']);
    const mixed = await post('history', { scope: 'miss', fact: { id: fact?.id, from: 'Priya Raman' } });
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(422);
  });

  it('a fact whose two ends are stored, named with another type or direction, is 404 offering what joins them', async () => {
    // Bob's fact between the same names is his own: never offered to alice, and his to him.
    await post('relate', { scope: 'miss', from: 'Priya Raman', to: 'Acme Robotics', type: 'owns' }, otherToken);
    const stored = {
      did_you_mean: 'Priya Raman -[works_at]-> Acme Robotics',
      fact: { from: 'Priya Raman', to: 'Acme Robotics', type: 'works_at' },
    };
    const asked = [
      { from: 'Priya Raman', to: 'Acme Robotics', type: 'employed_by' },
      { from: 'Acme Robotics', to: 'Priya Raman', type: 'works_at' },
    ];
    for (const verb of ['forget', 'history']) {
      for (const fact of asked) {
        const miss = await post(verb, { scope: 'miss', fact });
        expect([verb, miss.status], JSON.stringify(miss.body)).toEqual([verb, 404]);
        expect(miss.body.error, verb).toMatchObject({ code: 'NOT_FOUND', details: [stored] });
        const message = (miss.body.error as { message: string }).message;
        expect(message).toContain('stored between them: "Priya Raman" -[works_at]-> "Acme Robotics"');
      }
      const theirs = await post(verb, { scope: 'miss', fact: asked[0] }, otherToken);
      expect(theirs.status, JSON.stringify(theirs.body)).toBe(404);
      expect((theirs.body.error as { details: unknown[] }).details).toEqual([
        { did_you_mean: 'Priya Raman -[owns]-> Acme Robotics', fact: { ...stored.fact, type: 'owns' } },
      ]);
    }
    // A model reads the same through MCP, in the message as in the details.
    const mcp = await client.callTool({ name: 'memory_forget', arguments: { scope: 'miss', fact: asked[0] } });
    const { isError, body } = toolJson(mcp);
    expect(isError).toBe(true);
    expect(body.error).toMatchObject({ code: 'NOT_FOUND', details: [stored] });
    expect(JSON.stringify(mcp.content)).toContain('-[works_at]->');
    const { tools } = await client.listTools();
    for (const name of ['memory_forget', 'memory_history']) {
      expect(tools.find((x) => x.name === name)?.description).toMatch(/both ends stored.*the facts between them/);
    }
    // Nothing was forgotten.
    const recalled = await post('recall', { scope: 'miss', subject: 'Priya Raman' });
    expect((recalled.body.facts as { relation: string }[]).map((f) => f.relation)).toEqual(['works_at']);
  });

  it('recall offers a stored name the subject holds or abbreviates', async () => {
    for (const [subject, meant] of [
      ['Dr. Priya Raman', 'Priya Raman'],
      ['Acme Robotics Incorporated', 'Acme Robotics'],
      ['Priya R.', 'Priya Raman'],
    ]) {
      const r = await post('recall', { scope: 'miss', subject });
      expect([subject, r.body.state, r.body.did_you_mean]).toEqual([subject, 'nothing_stored', [meant]]);
    }
  });

  it('recall says when facts were left out and how to reach them', async () => {
    const relations = Array.from({ length: 60 }, (_, i) => ({
      source: 'Hub Corp',
      target: `Widget ${i}`,
      type: 'makes',
    }));
    expect((await post('remember', { scope: 'hub', facts: { relations } })).status).toBe(200);
    const r = await post('recall', { scope: 'hub', subject: 'Hub Corp' });
    expect(r.body.omitted).toBe(10);
    expect(r.body.omitted_hint).toMatch(/^50 facts shown, 10 left out.*larger `k` \(at most 1000\).*memory_context/);
    const { tools } = await client.listTools();
    const recall = tools.find((x) => x.name === 'memory_recall');
    expect(recall?.description).toMatch(/default 50, max 1000/);
    expect(recall?.description).not.toMatch(/spelled near a stored one is `nothing_stored`/);
  });
});
