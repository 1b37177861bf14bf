import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SERVICES } from '../ts/service/memory.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// The Streamable HTTP rules of /v1/mcp as a raw HTTP client meets them: headers, sessions,
// batches and the JSON-RPC errors for each refusal (the SDK client never sends most of these).

let t: TestNode;
const ACCEPT = 'application/json, text/event-stream';
const VERSION = '2025-06-18';

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.stop();
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/v1/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) };
}

const initialize = (id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/** A fresh initialized session: its headers for the next requests. */
async function session(): Promise<Record<string, string>> {
  const init = await post(initialize());
  expect(init.status).toBe(200);
  const sid = init.headers.get('mcp-session-id');
  expect(sid).toMatch(/^[0-9a-f-]{36}$/);
  const headers = { 'mcp-session-id': sid as string, 'mcp-protocol-version': VERSION };
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
  return headers;
}

describe('/v1/mcp over raw HTTP', () => {
  it('initialize answers with the server info, the protocol version and a session id header', async () => {
    const init = await post(initialize(7));
    expect(init.status).toBe(200);
    expect(init.headers.get('content-type')).toContain('application/json');
    expect(init.json).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { protocolVersion: VERSION, serverInfo: { name: 'cairn' }, capabilities: { tools: {} } },
    });
    expect(init.headers.get('mcp-session-id')).toBeTruthy();
  });

  it('a notification alone is 202 with no body', async () => {
    const h = await session();
    const r = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } }, h);
    expect(r.status).toBe(202);
    expect(r.text).toBe('');
  });

  it('a batch is answered with an array of replies in the order of its requests', async () => {
    const h = await session();
    const r = await post(
      [
        { jsonrpc: '2.0', id: 'b', method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 98 } },
        { jsonrpc: '2.0', id: 'a', method: 'ping' },
      ],
      h,
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toBe(h['mcp-session-id']);
    expect(r.json.map((m: { id: string }) => m.id)).toEqual(['b', 'a']);
    expect(r.json[0].result.tools.length).toBeGreaterThan(5);
    expect(r.json[1]).toEqual({ jsonrpc: '2.0', id: 'a', result: {} });
  });

  it('a tool call is answered with its result as text and as structured content', async () => {
    const h = await session();
    const r = await post(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'memory_status', arguments: {} } },
      h,
    );
    expect(r.status).toBe(200);
    expect(r.json.id).toBe(3);
    expect(JSON.parse(r.json.result.content[0].text)).toEqual(r.json.result.structuredContent);
  });

  it('an unknown method is a JSON-RPC error in a 200 reply', async () => {
    const h = await session();
    const r = await post({ jsonrpc: '2.0', id: 4, method: 'no/such/method' }, h);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 4, error: { code: -32601 } });
  });

  const refusals: [string, () => Promise<{ status: number; json: unknown }>, number, number][] = [
    ['an Accept without text/event-stream', () => post(initialize(), { accept: 'application/json' }), 406, -32000],
    ['a body that is not JSON-RPC', () => post({ hello: 'world' }), 400, -32700],
    ['a body that is not JSON', () => post('{"jsonrpc":'), 400, -32700],
    ['an empty body', () => post(''), 400, -32700],
    ['a message with a wrong jsonrpc version', () => post({ jsonrpc: '1.0', id: 1, method: 'ping' }), 400, -32700],
    [
      'a batch of more than 100 messages',
      () => post(Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }))),
      400,
      -32600,
    ],
    [
      'initialize batched with another request',
      () => post([initialize(), { jsonrpc: '2.0', id: 2, method: 'ping' }]),
      400,
      -32600,
    ],
    ['a request with no session', () => post({ jsonrpc: '2.0', id: 1, method: 'ping' }), 400, -32000],
    [
      'a session id that does not exist',
      () =>
        post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }),
      404,
      -32001,
    ],
  ];
  for (const [what, send, status, code] of refusals) {
    it(`refuses ${what}: ${status}, JSON-RPC error ${code}`, async () => {
      const r = await send();
      expect(r.status).toBe(status);
      expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
    });
  }

  it.each(['PUT', 'PATCH', 'OPTIONS'])('answers %s with 405 Allow: POST, DELETE, before auth', async (method) => {
    const r = await fetch(`${t.url}/v1/mcp`, { method });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST, DELETE');
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('refuses a body that is not JSON with 415 before anything reaches the session', async () => {
    const h = await session();
    const r = await post('ping', { ...h, 'content-type': 'text/plain' });
    expect(r.status).toBe(415);
  });

  it('refuses a second initialize on a session, an unsupported protocol version, and a duplicate id', async () => {
    const h = await session();
    expect((await post(initialize(2), h)).json).toMatchObject({ error: { code: -32600 } });
    const old = await post({ jsonrpc: '2.0', id: 3, method: 'ping' }, { ...h, 'mcp-protocol-version': '1999-01-01' });
    expect(old.status).toBe(400);
    expect(old.json.error.message).toContain('Unsupported protocol version: 1999-01-01');
    const dup = await post(
      [
        { jsonrpc: '2.0', id: 5, method: 'ping' },
        { jsonrpc: '2.0', id: 5, method: 'ping' },
      ],
      h,
    );
    expect(dup.status).toBe(400);
    expect(dup.json).toMatchObject({ error: { code: -32600 } });
    // The session still works after each refusal.
    expect((await post({ jsonrpc: '2.0', id: 6, method: 'ping' }, h)).json).toEqual({
      jsonrpc: '2.0',
      id: 6,
      result: {},
    });
  });

  it('refuses a request id that another POST of the session is still waiting on, and answers that POST', async () => {
    const h = await session();
    // Hold the first call inside the service until the second POST has been answered, so the two
    // overlap whatever the machine's speed.
    const status = SERVICES.status;
    if (status === undefined) throw new Error('no status service');
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    SERVICES.status = async (...args) => {
      entered();
      await gate;
      return status(...args);
    };
    try {
      const call = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'memory_status', arguments: {} } };
      const first = post(call, h);
      await inside;
      const second = await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, h);
      expect(second.status).toBe(400);
      expect(second.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(second.json.error.message).toContain('request id 9 is already in flight');
      // Another id goes through meanwhile.
      expect((await post({ jsonrpc: '2.0', id: 10, method: 'ping' }, h)).json).toEqual({
        jsonrpc: '2.0',
        id: 10,
        result: {},
      });
      release();
      const r = await first;
      expect(r.status).toBe(200);
      expect(r.json.id).toBe(9);
      expect(r.json.result.structuredContent).toMatchObject({ node: { status: 'ok' } });
    } finally {
      release();
      SERVICES.status = status;
    }
    // Once answered, the id is free again.
    expect((await post({ jsonrpc: '2.0', id: 9, method: 'ping' }, h)).json).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {},
    });
  });

  it('DELETE ends the session: later requests on it are 404', async () => {
    const h = await session();
    const del = await fetch(`${t.url}/v1/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN}`, ...h },
    });
    expect(del.status).toBe(200);
    const after = await post({ jsonrpc: '2.0', id: 1, method: 'ping' }, h);
    expect(after.status).toBe(404);
    expect(after.json).toMatchObject({ error: { code: -32001 } });
    const again = await fetch(`${t.url}/v1/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${ADMIN}`, ...h },
    });
    expect(again.status).toBe(404);
  });
});
