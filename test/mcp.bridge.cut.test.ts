import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startNode } from '../ts/server/node.js';
import { type Cut, cutProxy, type RpcMessage } from './cut-proxy.js';
import { stdioBridge, toolJson } from './mcp-client.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

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
async function writes(key: string, at = { node: t, token }): Promise<number> {
  const r = await at.node.call('POST', '/v1/memory/history', { token: at.token, body: { key } });
  expect(r.status).toBe(200);
  return (r.body.events as unknown[]).length;
}

/** memory_relate: a write that takes no idempotencyKey, so the bridge cannot make a repeat safe. */
const relate = async (client: Client, to: string) =>
  toolJson(await client.callTool({ name: 'memory_relate', arguments: { from: 'Cut', type: 'knows', to } }));

/** How many times the node applied `Cut knows to` (its history's events). */
async function asserted(to: string): Promise<number> {
  const r = await t.call('POST', '/v1/memory/history', { token, body: { fact: { from: 'Cut', type: 'knows', to } } });
  expect(r.status).toBe(200);
  return (r.body.events as unknown[]).length;
}

it('a write whose connection closed after the node ran it is not sent again: UNAVAILABLE says it may have been applied', async () => {
  const b = await through(first('memory_relate', 'close-after'));
  try {
    const r = await relate(b.client, 'After');
    expect(r.isError).toBe(true);
    const error = r.body.error as { code: string; message: string; details: unknown[] };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('may or may not have been applied');
    expect(error.message).toContain('memory_recall');
    expect(error.details).toEqual([{ applied: 'unknown' }]);
    // The node ran it once; the bridge did not run it again.
    expect(await asserted('After')).toBe(1);
    // The bridge goes on working.
    expect((await relate(b.client, 'Later')).isError).toBe(false);
    expect(await asserted('Later')).toBe(1);
  } finally {
    await b.close();
  }
});

it('a write re-sent after "shutting down" whose connection then closed is not sent a third time: its outcome is unknown', async () => {
  const cuts: Cut[] = ['shutting-down', 'close-after'];
  const b = await through((msg) => (msg.method === 'tools/call' ? (cuts.shift() ?? 'pass') : 'pass'));
  try {
    const r = await relate(b.client, 'Twice');
    expect(r.isError).toBe(true);
    expect(r.body.error).toMatchObject({ code: 'UNAVAILABLE', details: [{ applied: 'unknown' }] });
    expect(cuts).toEqual([]);
    expect(await asserted('Twice')).toBe(1);
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

it('a note write sent without an idempotencyKey, cut off by a node restart after it ran, is applied once and answered as written', async () => {
  const own = await startTestNode();
  const { token: desktop } = await own.token({ agent: 'desktop', user: 'ann' });
  let node = own.node;
  // The node runs the write, is stopped and started again on its store, and only then is the
  // bridge's connection closed: the reply never reached it.
  const restart = async () => {
    await node.close();
    node = await startNode({ dataDir: own.dataDir, port: own.port, adminToken: ADMIN, logLevel: 'silent' });
  };
  const sent: Record<string, unknown>[] = [];
  const proxy = await cutProxy(
    own.url,
    (msg) => {
      if (msg.method !== 'tools/call') return 'pass';
      sent.push(msg.params?.arguments ?? {});
      // The second write: the first made version 1.
      return sent.length === 2 ? 'close-after' : 'pass';
    },
    restart,
  );
  const client = await stdioBridge('keyed-test', ['--url', proxy.url], { CAIRN_TOKEN: desktop });
  try {
    expect((await write(client, { key: 'cut/unkeyed', value: 0 })).isError).toBe(false);
    const r = await write(client, { key: 'cut/unkeyed', value: 1 });
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    // The receipt of the one version written, as a first write's: the model sent it once.
    expect(r.body).toEqual({
      id: expect.any(String),
      key: 'cut/unkeyed',
      version: 2,
      evolution: 'replaced',
      supersedes: 1,
      visibility: 'user',
    });
    expect(await writes('cut/unkeyed', { node: own, token: desktop })).toBe(2);
    // Both sends of the cut-off write carried the one key the bridge added.
    const keys = sent.slice(1).map((a) => a.idempotencyKey);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^cairn-mcp:[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(sent[0]?.idempotencyKey).not.toBe(keys[0]);
  } finally {
    await client.close();
    await proxy.close();
    await node.close();
    await own.stop();
  }
});

it('a note write the bridge keyed, cut off by a node that stays down, names its key: sent again with it, the write is not applied twice', async () => {
  const own = await startTestNode();
  const { token: desktop } = await own.token({ agent: 'desktop', user: 'ann' });
  let node = own.node;
  let cuts = 0;
  const proxy = await cutProxy(
    own.url,
    (msg) => (msg.method === 'tools/call' && cuts++ === 0 ? 'close-after' : 'pass'),
    () => node.close(),
  );
  const env = { CAIRN_TOKEN: desktop, CAIRN_NODE_WAIT_MS: '800' };
  const client = await stdioBridge('keyed-down-test', ['--url', proxy.url], env);
  try {
    const r = await write(client, { key: 'cut/down', value: 1 });
    expect(r.isError).toBe(true);
    const error = r.body.error as { code: string; message: string; details: [{ idempotencyKey: string }] };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.details).toEqual([{ applied: 'unknown', idempotencyKey: expect.stringMatching(/^cairn-mcp:/) }]);
    const [{ idempotencyKey }] = error.details;
    expect(error.message).toContain(
      `may or may not have been applied: send it again with "idempotencyKey": "${idempotencyKey}"`,
    );
    node = await startNode({ dataDir: own.dataDir, port: own.port, adminToken: ADMIN, logLevel: 'silent' });
    // The model repeats it with the key it was given: the node had run it, so it is replayed.
    const again = await write(client, { key: 'cut/down', value: 1, idempotencyKey });
    expect(again.isError, JSON.stringify(again.body)).toBe(false);
    expect(again.body).toMatchObject({ version: 1, replayed: true });
    expect(await writes('cut/down', { node: own, token: desktop })).toBe(1);
  } finally {
    await client.close();
    await proxy.close();
    await node.close();
    await own.stop();
  }
});

it('a handoff sent without an idempotencyKey whose connection closed after the node ran it leaves one capsule', async () => {
  const b = await through(first('memory_handoff_create', 'close-after'));
  try {
    const args = { taskId: 'cut-handoff', summary: 'half done', status: 'in_progress' };
    const r = toolJson(await b.client.callTool({ name: 'memory_handoff_create', arguments: args }));
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    expect(r.body).toMatchObject({ taskId: 'cut-handoff' });
    expect(r.body.replayed).toBeUndefined();
    const audit = await t.call('POST', '/v1/memory/audit', { token, body: { limit: 100 } });
    expect(audit.status, JSON.stringify(audit.body)).toBe(200);
    const created = (audit.body.events as { family: string; target: { taskId?: string } }[]).filter(
      (e) => e.family === 'handoff' && e.target.taskId === 'cut-handoff',
    );
    expect(created, JSON.stringify(audit.body)).toHaveLength(1);
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
