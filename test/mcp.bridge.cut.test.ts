import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { type Cut, cutProxy, type RpcMessage } from './cut-proxy.js';
import { stdioBridge, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// `cairn mcp` when its node stops or restarts with a request in flight: a request the node did not
// run is sent again on a new session; one that may have run is sent again only when a repeat is
// safe, else the model is told its outcome is unknown (DESIGN §3 UNAVAILABLE), never given raw
// "fetch failed". The cuts are made by a proxy between bridge and node, so each happens exactly.

let t: TestNode;
let token: string;

beforeAll(async () => {
  t = await startTestNode();
  ({ token } = await t.token({ agent: 'desktop', user: 'ann' }));
});
afterAll(async () => {
  await t.stop();
});

/** A bridge to the node through a proxy that ends the requests `cut` picks. */
async function through(cut: (msg: RpcMessage) => Cut) {
  const proxy = await cutProxy(t.url, cut);
  const client = await stdioBridge('cut-test', ['--url', proxy.url], { CAIRN_TOKEN: token });
  return {
    client,
    async close() {
      await client.close();
      await proxy.close();
    },
  };
}

/** Ends the first call of tool `name` as `how`; passes everything else. */
function first(name: string, how: Cut): (msg: RpcMessage) => Cut {
  let done = false;
  return (msg) => {
    if (done || msg.method !== 'tools/call' || msg.params?.name !== name) return 'pass';
    done = true;
    return how;
  };
}

const write = async (client: Client, args: Record<string, unknown>) =>
  toolJson(await client.callTool({ name: 'memory_note_write', arguments: { kind: 'decision', ...args } }));

/** How many writes of note `key` the node applied (its history's events). */
async function writes(key: string): Promise<number> {
  const r = await t.call('POST', '/v1/memory/history', { token, body: { key } });
  expect(r.status).toBe(200);
  return (r.body.events as unknown[]).length;
}

it('a write whose connection closed after the node ran it is not sent again: UNAVAILABLE says it may have been applied', async () => {
  const b = await through(first('memory_note_write', 'close-after'));
  try {
    const r = await write(b.client, { key: 'cut/after', value: 1 });
    expect(r.isError).toBe(true);
    const error = r.body.error as { code: string; message: string; details: unknown[] };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('may or may not have been applied');
    expect(error.message).toContain('idempotencyKey');
    expect(error.details).toEqual([{ applied: 'unknown' }]);
    // The node ran it once; the bridge did not run it again.
    expect(await writes('cut/after')).toBe(1);
    // The bridge goes on working.
    expect((await write(b.client, { key: 'cut/after', value: 2 })).isError).toBe(false);
    expect(await writes('cut/after')).toBe(2);
  } finally {
    await b.close();
  }
});

it('a write re-sent after "shutting down" whose connection then closed is not sent a third time: its outcome is unknown', async () => {
  const cuts: Cut[] = ['shutting-down', 'close-after'];
  const b = await through((msg) => (msg.method === 'tools/call' ? (cuts.shift() ?? 'pass') : 'pass'));
  try {
    const r = await write(b.client, { key: 'cut/twice', value: 1 });
    expect(r.isError).toBe(true);
    expect(r.body.error).toMatchObject({ code: 'UNAVAILABLE', details: [{ applied: 'unknown' }] });
    expect(cuts).toEqual([]);
    expect(await writes('cut/twice')).toBe(1);
  } finally {
    await b.close();
  }
});

it('a write with an idempotencyKey whose connection closed is sent again: applied once, its first receipt returned', async () => {
  const b = await through(first('memory_note_write', 'close-after'));
  try {
    const r = await write(b.client, { key: 'cut/keyed', value: 1, idempotencyKey: 'cut-keyed-1' });
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    expect(r.body).toMatchObject({ replayed: true, key: 'cut/keyed', version: 1 });
    expect(await writes('cut/keyed')).toBe(1);
  } finally {
    await b.close();
  }
});

it('a read whose connection closed before the node got it is sent again', async () => {
  const stored = { key: 'cut/read', value: 'x', kind: 'decision' };
  expect((await t.call('POST', '/v1/memory/note_write', { token, body: stored })).status).toBe(200);
  const b = await through(first('memory_note_list', 'close-before'));
  try {
    const r = toolJson(await b.client.callTool({ name: 'memory_note_list', arguments: { key: 'cut/read' } }));
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    expect(r.body.notes).toMatchObject([{ key: 'cut/read', value: 'x' }]);
  } finally {
    await b.close();
  }
});

it('a call answered "shutting down", whose new session is refused so too at first, runs once on the node that answers', async () => {
  let draining = 0;
  const b = await through((msg) => {
    if (msg.method === 'tools/call' && draining === 0) draining = 1;
    else if (msg.method === 'initialize' && draining > 0 && draining < 3) draining++;
    else return 'pass';
    return 'shutting-down';
  });
  try {
    const r = await write(b.client, { key: 'cut/draining', value: 1 });
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    expect(draining).toBe(3);
    expect(await writes('cut/draining')).toBe(1);
  } finally {
    await b.close();
  }
});

it('tools/list while no node answers: JSON-RPC -32001, its message starting UNAVAILABLE, the §3 body as data', async () => {
  const gone = await startTestNode();
  const { token: own } = await gone.token({ agent: 'desktop' });
  const client = await stdioBridge('gone-test', ['--url', gone.url], { CAIRN_TOKEN: own, CAIRN_NODE_WAIT_MS: '1000' });
  try {
    await gone.node.close();
    const err = await client.listTools().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    const { code, message, data } = err as McpError;
    expect(code).toBe(-32001);
    expect(message).toContain(`UNAVAILABLE: no node is running at ${gone.url}`);
    expect(data).toMatchObject({ error: { code: 'UNAVAILABLE', details: [] } });
    // A tool call in the same state: the same error as a tool error.
    const r = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(r.isError).toBe(true);
    expect(r.body.error).toMatchObject({ code: 'UNAVAILABLE' });
  } finally {
    await client.close();
    await gone.stop();
  }
});
