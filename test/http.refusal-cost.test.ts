import { afterAll, beforeAll, expect, it } from 'vitest';

import { postMcp } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by an audit: bodies of a few MiB past a documented limit (nesting, an array's items, a
// note value's size, unknown fields) were refused only after JSON.parse and walks over every
// item, seconds of the event loop during which every other request on the node waited. Each is
// now refused from one pass over its text, with the same 422.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
  // A store's first notes call may write the notes index's marker: out of the way first.
  expect((await t.call('POST', '/v1/memory/note_list', { token: agent, body: {} })).status).toBe(200);
});
afterAll(() => t.stop());

/** Posts `body` to `verb` and checks that the refusal wrote nothing. */
async function refused(verb: string, body: string) {
  const before = await t.txn();
  const r = await t.call('POST', `/v1/memory/${verb}`, { token: agent, body });
  expect(await t.txn(), 'a refusal writes nothing').toBe(before);
  return r;
}

const zeros = (n: number) => Array(n).fill('0').join(',');
const keys = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `"${prefix}${i}":0`).join(',');

// Before the fix each took 2–9 s of the event loop with /health waiting as long; now 65–230 ms
// (measured, docs/design/node.md). Tests assert no time: the messages below are the text scan's
// (an item count, not the serialised size the parsed walk reported), and the replies stay small.
it.each([
  {
    what: 'a note value nested 3.5M levels',
    verb: 'note_write',
    body: `{"key":"d","kind":"decision","value":${'['.repeat(3_500_000)}${']'.repeat(3_500_000)}}`,
    message: 'value: nests deeper than 64 levels',
  },
  {
    what: 'a note value of 3.5M items',
    verb: 'note_write',
    body: `{"key":"a","kind":"decision","value":[${zeros(3_500_000)}]}`,
    message:
      'value: holds an array or object of more than 32768 items, so it is more than 65536 bytes serialised; at most 65536',
  },
  {
    what: 'a note value of 500k keys',
    verb: 'note_write',
    body: `{"key":"k","kind":"decision","value":{${keys(500_000, 'k')}}}`,
    message:
      'value: holds an array or object of more than 32768 items, so it is more than 65536 bytes serialised; at most 65536',
  },
  {
    what: '3M messages',
    verb: 'remember',
    body: `{"messages":[${zeros(3_000_000)}]}`,
    message: 'messages: Too big: expected array to have <=10000 items',
  },
  {
    what: '3M decisions',
    verb: 'handoff_create',
    body: `{"taskId":"t","summary":"s","decisions":[${zeros(3_000_000)}]}`,
    message: 'decisions: Too big: expected array to have <=100 items',
  },
  {
    what: 'a decision of 500k keys',
    verb: 'handoff_create',
    body: `{"taskId":"t","summary":"s","decisions":[{${keys(500_000, 'k')}}]}`,
    message:
      'decisions.0: holds an array or object of more than 2048 items, so it is more than 4096 bytes serialised; at most 4096',
  },
  {
    what: 'an entity of 300k attributes',
    verb: 'remember',
    body: `{"facts":{"entities":[{"name":"Wide","type":"t","attributes":{${keys(300_000, 'k')}}}]}}`,
    message:
      'facts.entities.0.attributes: holds an array or object of more than 32768 items, so it is more than 65536 bytes serialised; at most 65536',
  },
  {
    what: 'a fact of 300k attributes',
    verb: 'relate',
    body: `{"from":"A","relation":"r","to":"B","attributes":{${keys(300_000, 'k')}}}`,
    message:
      'attributes: holds an array or object of more than 32768 items, so it is more than 65536 bytes serialised; at most 65536',
  },
  {
    what: '400k unknown fields',
    verb: 'note_list',
    body: `{${keys(400_000, 'x')}}`,
    message: 'x0: unknown field(s): x0, x1, x2, x3, x4 and 399995 more',
  },
])('refuses $what from its text', async ({ verb, body, message }) => {
  const r = await refused(verb, body);
  expect(r.status).toBe(422);
  expect(r.body.error?.code).toBe('VALIDATION_ERROR');
  expect(r.body.error?.message).toBe(message);
  expect(JSON.stringify(r.body).length).toBeLessThan(500);
});

it('keeps what is within the limits, and names a few unknown fields and how many more', async () => {
  const v = await t.call('POST', '/v1/memory/note_write', {
    token: agent,
    body: `{"key":"wide","kind":"decision","value":[${zeros(30_000)}]}`,
  });
  expect(v.status, JSON.stringify(v.body)).toBe(200);
  const h = await t.call('POST', '/v1/memory/handoff_create', {
    token: agent,
    body: { taskId: 't', summary: 's', decisions: Array.from({ length: 100 }, (_, i) => `d${i}`) },
  });
  expect(h.status, JSON.stringify(h.body)).toBe(200);
  const over = await t.call('POST', '/v1/memory/remember', {
    token: agent,
    body: { facts: { entities: Array.from({ length: 1001 }, (_, i) => ({ name: `E${i}`, type: 't' })) } },
  });
  expect(over.body.error?.details).toEqual([
    { field: 'facts.entities', message: 'Too big: expected array to have <=1000 items' },
  ]);
  const few = await t.call('POST', '/v1/memory/note_list', {
    token: agent,
    body: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`x${i}`, 0])),
  });
  expect(few.body.error?.details).toEqual([
    { field: 'x0', message: 'unknown field(s): x0, x1, x2, x3, x4 and 3 more' },
  ]);
});

it('refuses a tool call nested too deep as the tool error it was, naming the argument', async () => {
  const init = await postMcp(
    t.url,
    agent,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  );
  const h = { 'mcp-session-id': init.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-06-18' };
  const call = (value: string) =>
    postMcp(
      t.url,
      agent,
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_note_write","arguments":{"key":"m","kind":"decision","value":${value}}}}`,
      h,
    );
  // 63 levels inside the arguments are within the limit (the engine's own 32 for free JSON refuses it).
  const within = await call(`${'['.repeat(62)}${']'.repeat(62)}`);
  expect(within.json.result.structuredContent.error.message).not.toContain('64 levels');
  const deep = await call(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
  expect(deep.status).toBe(200);
  expect(deep.json.id).toBe(7);
  expect(deep.json.result.isError).toBe(true);
  expect(deep.json.result.structuredContent.error).toEqual({
    code: 'VALIDATION_ERROR',
    message: 'value: nests deeper than 64 levels',
    details: [{ field: 'value', message: 'nests deeper than 64 levels' }],
  });
  const long = await call(`[${zeros(40_000)}]`);
  expect(long.json.result.structuredContent.error.details).toEqual([
    { field: 'value', message: expect.stringContaining('more than 32768 items') },
  ]);
});

it('answers a user the token may not act for with 403 first, beside a part refused from the text', async () => {
  const ana = (await t.token({ agent: 'claude', user: 'ana' })).token;
  for (const body of [
    `{"user_id":"bob","key":"d","kind":"decision","value":${'['.repeat(100)}${']'.repeat(100)}}`,
    `{"user_id":"bob","messages":[${zeros(20_000)}]}`,
  ]) {
    const verb = body.includes('messages') ? 'remember' : 'note_write';
    const r = await t.call('POST', `/v1/memory/${verb}`, { token: ana, body });
    expect([r.status, r.body.error?.details]).toEqual([403, [expect.objectContaining({ field: 'user_id' })]]);
  }
});
