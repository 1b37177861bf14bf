import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// An agent that misspelt its scope (or left out X-Cairn-Scope) read `memory_note_list`'s empty
// page, and `memory_history {key}`'s 404, as "nothing stored". Both now name the caller's other
// scopes holding notes it asked for (`elsewhere`, as handoff_resume's): never another user's,
// never a scope the caller's token may not use, not even by name.

let t: TestNode;
let ana: string;
let bo: string;
let limited: string;

beforeAll(async () => {
  t = await startTestNode();
  ana = (await t.token({ agent: 'claude', user: 'ana' })).token;
  bo = (await t.token({ agent: 'claude', user: 'bo' })).token;
  limited = (await t.token({ agent: 'reviewer', user: 'ana', scopes: ['default', 'work'] })).token;
  for (const [scope, token, key] of [
    ['work', ana, 'deploy-window'],
    ['work', ana, 'rollout-plan'],
    ['hidden-scope', ana, 'deploy-window'],
    ['bo-scope', bo, 'deploy-window'],
    ['bo-scope', bo, 'bo-only'],
  ] as const) {
    const r = await post('note_write', { key, kind: 'decision', value: 'Tuesday', scope }, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

const post = (verb: string, body: object, token: string) => t.call('POST', `/v1/memory/${verb}`, { body, token });

it('an empty note list names the scopes of the user holding such notes, as the token allows', async () => {
  const every = await post('note_list', {}, ana);
  expect(every.status, JSON.stringify(every.body)).toBe(200);
  expect(every.body).toMatchObject({ notes: [], nextCursor: null });
  expect(every.body.elsewhere).toEqual({
    scopes: [
      { scope: 'work', notes: 2 },
      { scope: 'hidden-scope', notes: 1 },
    ],
    hint: expect.stringContaining('"work" (2), "hidden-scope" (1)'),
  });
  expect(JSON.stringify(every.body)).not.toContain('bo-');
  const key = await post('note_list', { key: 'rollout-plan' }, ana);
  expect(key.body.elsewhere).toEqual({ scopes: [{ scope: 'work', notes: 1 }], hint: expect.any(String) });
  const narrow = await post('note_list', { key: 'deploy-window' }, limited);
  expect(narrow.body.elsewhere).toEqual({ scopes: [{ scope: 'work', notes: 1 }], hint: expect.any(String) });
  expect(JSON.stringify(narrow.body)).not.toContain('hidden-scope');
  // Bo hears of his own scope only, and of none of ana's.
  const bos = await post('note_list', {}, bo);
  expect(bos.body.elsewhere).toEqual({ scopes: [{ scope: 'bo-scope', notes: 2 }], hint: expect.any(String) });
  expect(JSON.stringify(bos.body)).not.toMatch(/work|hidden-scope|rollout/);
  // Asked where they are, they are listed, and nothing points elsewhere.
  const there = await post('note_list', { scope: 'work' }, limited);
  expect((there.body.notes as unknown[]).length).toBe(2);
  expect(there.body.elsewhere).toBeUndefined();
  // The engine's list of readable scopes is the node's to give, never a client's.
  const forged = await post('note_list', { readableScopes: ['hidden-scope'] }, limited);
  expect(forged.status).toBe(422);
});

it('a history miss names the scopes holding the key in its 404, as the token allows', async () => {
  const miss = await post('history', { key: 'deploy-window' }, ana);
  expect(miss.status, JSON.stringify(miss.body)).toBe(404);
  const error = miss.body.error as { message: string; details: unknown[] };
  expect(error.details).toContainEqual({
    elsewhere: {
      scopes: [
        { scope: 'hidden-scope', notes: 1 },
        { scope: 'work', notes: 1 },
      ],
      hint: expect.stringContaining('send `scope`'),
    },
  });
  expect(error.message).toContain('"hidden-scope" (1), "work" (1)');
  expect(JSON.stringify(miss.body)).not.toContain('bo-scope');
  const narrow = await post('history', { key: 'deploy-window' }, limited);
  expect(JSON.stringify(narrow.body)).not.toContain('hidden-scope');
  expect((narrow.body.error as { details: unknown[] }).details).toContainEqual({
    elsewhere: { scopes: [{ scope: 'work', notes: 1 }], hint: expect.any(String) },
  });
  const bos = await post('history', { key: 'rollout-plan' }, bo);
  expect(bos.status).toBe(404);
  expect(JSON.stringify(bos.body)).not.toMatch(/work|hidden-scope|elsewhere/);
  const forged = await post('history', { key: 'deploy-window', readableScopes: ['hidden-scope'] }, limited);
  expect(forged.status).toBe(422);
});

it('memory_note_list over MCP carries elsewhere in its structured reply', async () => {
  const client = await mcpClient(t.url, limited);
  try {
    const r = toolJson(await client.callTool({ name: 'memory_note_list', arguments: { key: 'rollout-plan' } }));
    expect(r.body.elsewhere).toEqual({ scopes: [{ scope: 'work', notes: 1 }], hint: expect.any(String) });
  } finally {
    await client.close();
  }
});
