import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, postMcp, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// JSON that cannot be kept as sent (found by an audit): a `__proto__` key was refused as "not
// valid JSON" naming no field (over MCP a transport parse error the model never saw), and an
// integer of 20 digits was stored silently as another number. Each is now a validation error
// naming the field, over MCP a tool error, and nothing is written.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

const write = (value: string) => `{"scope":"jb","key":"k","kind":"user_fact","value":${value}}`;

describe('a JSON body that cannot be kept as sent', () => {
  it.each([
    ['{"__proto__":{"admin":true}}', 'value.__proto__'],
    ['{"a":[1,{"constructor":{"prototype":{"x":1}}}]}', 'value.a.1.constructor'],
    ['{"id":12345678901234567891}', 'value.id'],
    ['[9007199254740993]', 'value.0'],
    // A repeated key (found by an audit): JSON.parse kept the last, silently.
    ['{"a":1,"a":2}', 'value.a'],
    ['{"x":[{"b":1},{"b":1, "\\u0062" :2}]}', 'value.x.1.b'],
    // A number past a double's range (found by an audit): JSON.parse made it Infinity, stored as null.
    ['{"e":1e400}', 'value.e'],
    ['[1,-1e999]', 'value.1'],
    [`{"d":1${'0'.repeat(310)}.5}`, 'value.d'],
    ['1E400', 'value', /beyond ±1\.79/],
    // A number too near 0 for a double (found by an audit): JSON.parse made it 0, stored as 0.
    ['{"u":1e-400}', 'value.u', /nearer to 0 than ±4\.9e-324/],
    ['[0,-2.5e-330]', 'value.1'],
    [`{"s":"1e-400","t":[{"d":0.${'0'.repeat(400)}1}]}`, 'value.t.0.d'],
  ])('%s is refused naming %s, and nothing is written', async (value, field, message?: RegExp) => {
    const before = await t.txn();
    const r = await t.call('POST', '/v1/memory/note_write', { body: write(value) });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error?.code).toBe('VALIDATION_ERROR');
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field })]);
    if (message !== undefined) expect(r.body.error?.message).toMatch(message);
    expect(await t.txn()).toBe(before);
  });

  it.each([
    ['note_write', '{"scope":"jb","key":"base","value":{"f":1e400},"writeMode":"merge"}', 'value.f'],
    [
      'remember',
      '{"scope":"jb","facts":{"entities":[{"name":"Gizmo","type":"device","attributes":{"weight":-1e400}}]}}',
      'facts.entities.0.attributes.weight',
    ],
    ['handoff_create', '{"scope":"jb","taskId":"T9","summary":"s","artifacts":[{"n":1e400}]}', 'artifacts.0.n'],
    ['note_write', '{"scope":"jb","key":"base","value":{"f":1e-400},"writeMode":"merge"}', 'value.f'],
    [
      'remember',
      '{"scope":"jb","facts":{"entities":[{"name":"Gizmo","type":"device","attributes":{"weight":-2.5e-330}}]}}',
      'facts.entities.0.attributes.weight',
    ],
  ])(
    '%s with a number a double cannot hold (past its range, or nearer 0) is refused naming it, and nothing changes',
    async (verb, body, field) => {
      const base = await t.call('POST', '/v1/memory/note_write', { body: write('{"f":1}').replace('"k"', '"base"') });
      expect(base.status, JSON.stringify(base.body)).toBe(200);
      const before = await t.txn();
      const r = await t.call('POST', `/v1/memory/${verb}`, { body });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.error?.code).toBe('VALIDATION_ERROR');
      expect(r.body.error?.details).toEqual([expect.objectContaining({ field })]);
      expect(await t.txn()).toBe(before);
      const list = await t.call('POST', '/v1/memory/note_list', { body: { scope: 'jb', key: 'base' } });
      expect((list.body.notes as { value: unknown }[])[0]?.value).toEqual({ f: 1 });
    },
  );

  it('a field given twice in the body is refused naming it, and nothing is written', async () => {
    const before = await t.txn();
    const body = '{"scope":"jb","key":"a","kind":"user_fact","value":1,"key":"b"}';
    const r = await t.call('POST', '/v1/memory/note_write', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'key' })]);
    expect(await t.txn()).toBe(before);
  });

  it('the same key in sibling objects, or key-like text inside a string, is no repeat', async () => {
    const value = '{"l":[{"a":1},{"a":2}],"s":"\\"a\\":1,\\"a\\":2","o":{"a":{"a":3}}}';
    const r = await t.call('POST', '/v1/memory/note_write', { body: write(value) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it('keeps what JSON holds exactly: safe integers, exponents, floats, such words inside strings', async () => {
    const value =
      '{"n":9007199254740991,"e":1e300,"f":0.1000000000000000055511,"s":"__proto__ constructor 12345678901234567891"}';
    const r = await t.call('POST', '/v1/memory/note_write', { body: write(value) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const list = await t.call('POST', '/v1/memory/note_list', { body: { scope: 'jb', key: 'k' } });
    const notes = list.body.notes as { value: Record<string, unknown> }[];
    expect(notes[0]?.value).toEqual({
      n: 9007199254740991,
      e: 1e300,
      f: 0.1,
      s: '__proto__ constructor 12345678901234567891',
    });
  });

  it('keeps zero however it is spelled, and the smallest numbers a double holds', async () => {
    const value = '{"a":0,"b":0.0,"c":0e5,"d":-0,"e":0.000e-400,"f":5e-324,"g":-1e-300,"h":"1e-400"}';
    const r = await t.call('POST', '/v1/memory/note_write', { body: write(value).replace('"k"', '"zeros"') });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const list = await t.call('POST', '/v1/memory/note_list', { body: { scope: 'jb', key: 'zeros' } });
    const stored = (list.body.notes as { value: Record<string, number> }[])[0]?.value ?? {};
    expect(
      Object.values(stored)
        .slice(0, 5)
        .every((n) => n === 0),
    ).toBe(true);
    expect(stored).toMatchObject({ f: 5e-324, g: -1e-300, h: '1e-400' });
  });

  it('a fact attribute too near 0 for a double is refused naming it, and a small one is kept', async () => {
    const fact = (weight: string) =>
      `{"scope":"jb","facts":{"entities":[{"name":"Speck","type":"device","attributes":{"weight":${weight}}}]}}`;
    const before = await t.txn();
    const r = await t.call('POST', '/v1/memory/remember', { body: fact('1e-400') });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'facts.entities.0.attributes.weight' })]);
    expect(await t.txn()).toBe(before);
    expect((await t.call('POST', '/v1/memory/remember', { body: fact('1e-300') })).status).toBe(200);
    const recall = await t.call('POST', '/v1/memory/recall', { body: { scope: 'jb', subject: 'Speck' } });
    expect(JSON.stringify(recall.body)).toContain('"weight":1e-300');
  });

  it('over MCP is a tool error naming the field inside the arguments', async () => {
    const { token } = await t.token({ agent: 'claude' });
    const client = await mcpClient(t.url, token);
    try {
      const args = JSON.parse(`{"scope":"jb","key":"m","kind":"user_fact","value":{"__proto__":1}}`);
      const r = toolJson(await client.callTool({ name: 'memory_note_write', arguments: args }));
      expect(r.isError).toBe(true);
      expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'value.__proto__' }] });
      // The session goes on.
      const ok = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
      expect(ok.isError).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('over MCP a number past a double’s range is a tool error naming it, and nothing is written', async () => {
    // The SDK client would send Infinity as null, so the JSON-RPC body is written by hand.
    const { token } = await t.token({ agent: 'raw' });
    const post = async (body: string, session?: string) => {
      const headers: Record<string, string> =
        session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
      const r = await postMcp(t.url, token, body, headers);
      return { ...r, session: r.headers.get('mcp-session-id') };
    };
    const init = await post(
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}',
    );
    const session = init.session as string;
    expect((await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', session)).status).toBe(202);
    const before = await t.txn();
    const r = await post(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_note_write","arguments":{"scope":"jb","key":"mi","kind":"user_fact","value":{"e":1e400}}}}',
      session,
    );
    expect(r.status).toBe(200);
    expect(r.json.result.isError).toBe(true);
    expect(r.json.result.structuredContent.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [{ field: 'value.e' }],
    });
    expect(await t.txn()).toBe(before);
  });
});
