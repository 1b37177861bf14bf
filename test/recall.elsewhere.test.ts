import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// A model that stored facts with `scope: "project-x"` and asked later without it read
// `nothing_stored` as "never stored". A recall or context that finds nothing in the caller's
// scope names the user's other scopes holding what was asked (`elsewhere`): never another
// user's, never a scope the caller's token may not use.

let t: TestNode;
let ana: string;

beforeAll(async () => {
  t = await startTestNode();
  ana = (await t.token({ agent: 'claude', user: 'ana' })).token;
  const bo = (await t.token({ agent: 'claude', user: 'bo' })).token;
  const facts = {
    facts: {
      entities: [{ name: 'Priya Raman', type: 'person' }],
      relations: [{ source: 'Priya Raman', target: 'Ledger', type: 'owns' }],
    },
  };
  for (const [scope, token] of [
    ['project-x', ana],
    ['secret', ana],
    ['theirs', bo],
  ] as const) {
    const r = await post('remember', { ...facts, scope }, token);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

const post = (verb: string, body: object, token: string) => t.call('POST', `/v1/memory/${verb}`, { body, token });

it('recall over MCP names the scopes of the user holding the name, as the token allows', async () => {
  const client = await mcpClient(t.url, ana);
  try {
    const r = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'Priya' } }));
    expect(r.body.state).toBe('nothing_stored');
    expect(r.body.elsewhere).toEqual({
      scopes: [
        { scope: 'project-x', name: 'Priya Raman' },
        { scope: 'secret', name: 'Priya Raman' },
      ],
      hint: expect.stringContaining('send `scope`'),
    });
    const there = toolJson(
      await client.callTool({ name: 'memory_recall', arguments: { subject: 'Priya', scope: 'project-x' } }),
    );
    expect(there.body.state).toBe('answered');
  } finally {
    await client.close();
  }
  const limited = (await t.token({ agent: 'reviewer', user: 'ana', scopes: ['default', 'project-x'] })).token;
  const r = await post('recall', { subject: 'Priya Raman' }, limited);
  expect((r.body.elsewhere as { scopes: unknown }).scopes).toEqual([{ scope: 'project-x', name: 'Priya Raman' }]);
  // The engine's list of readable scopes is the node's to give, never a client's.
  const forged = await post('recall', { subject: 'Priya', readableScopes: ['secret'] }, limited);
  expect(forged.status).toBe(422);
});

it('context on an empty scope names the scopes of the user holding knowledge', async () => {
  const r = await post('context', { question: 'Who owns the ledger?' }, ana);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.state).toBe('nothing_stored');
  expect(r.body.elsewhere).toEqual({
    scopes: [
      { scope: 'project-x', entities: 2, passages: 0 },
      { scope: 'secret', entities: 2, passages: 0 },
    ],
    hint: expect.stringContaining('send `scope`'),
  });
  expect(JSON.stringify(r.body)).not.toContain('theirs');
  // A note that answers in this scope is what to read: no pointer elsewhere then.
  const wrote = await post(
    'note_write',
    { key: 'ledger-owner', kind: 'user_fact', value: 'Priya owns the ledger' },
    ana,
  );
  expect(wrote.status, JSON.stringify(wrote.body)).toBe(200);
  const answered = await post('context', { question: 'Who owns the ledger?' }, ana);
  expect(answered.body.state).toBe('answered');
  expect(answered.body.elsewhere).toBeUndefined();
});
