import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { type RunningNode, startNode } from '../ts/server/node.js';
import { stdioBridge, toolJson } from './mcp-client.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// `cairn mcp` keeps working when the node loses its session: a desktop client holds the stdio
// server open for hours, through node restarts, session evictions and idle timeouts.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Bridged {
  t: TestNode;
  /** The node now serving the data dir (a restart replaces it). */
  node: RunningNode;
  client: Client;
}

async function bridged(opts: Parameters<typeof startTestNode>[0] = {}): Promise<Bridged> {
  const t = await startTestNode(opts);
  const { token } = await t.token({ agent: 'desktop', user: 'ann' });
  const client = await stdioBridge('bridge-test', ['--url', t.url], { CAIRN_TOKEN: token });
  return { t, node: t.node, client };
}

async function restart(b: Bridged, opts: Parameters<typeof startTestNode>[0] = {}) {
  await b.node.close();
  b.node = await startNode({ dataDir: b.t.dataDir, port: b.t.port, adminToken: ADMIN, logLevel: 'silent', ...opts });
}

const status = async (b: Bridged) => toolJson(await b.client.callTool({ name: 'memory_status', arguments: {} }));

let main: Bridged;
let idle: Bridged;
const IDLE = { sessions: { idleMs: 300 } };

beforeAll(async () => {
  main = await bridged();
  idle = await bridged(IDLE);
});
afterAll(async () => {
  for (const b of [main, idle]) {
    await b.client.close();
    await b.node.close();
    await b.t.stop();
  }
});

it('a call after the node restarted succeeds, and so do later ones', async () => {
  expect((await status(main)).isError).toBe(false);
  await restart(main);
  expect((await status(main)).isError).toBe(false);
  expect((await status(main)).isError).toBe(false);
  const { tools } = await main.client.listTools();
  expect(tools).toHaveLength(15);
});

it('a call made while the node is down waits for it to come back', async () => {
  await main.node.close();
  const pending = status(main);
  await sleep(600);
  main.node = await startNode({ dataDir: main.t.dataDir, port: main.t.port, adminToken: ADMIN, logLevel: 'silent' });
  expect((await pending).isError).toBe(false);
});

it('a call after the session was evicted at the session cap succeeds', async () => {
  expect((await status(main)).isError).toBe(false);
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'crowd', version: '0' } },
  };
  for (let i = 0; i < 65; i++) {
    const res = await fetch(`${main.t.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(200);
    await res.text();
  }
  const r = await status(main);
  expect(r.isError).toBe(false);
  expect(r.body.identity).toMatchObject({ agent: 'desktop', user: 'ann' });
});

it('a call after the session sat idle past the timeout succeeds', async () => {
  expect((await status(idle)).isError).toBe(false);
  await sleep(1000);
  expect((await status(idle)).isError).toBe(false);
});

it('an unknown tool’s error carries its code once', async () => {
  const err = await main.client.callTool({ name: 'no_such_tool', arguments: {} }).then(
    (r) => r,
    (e: unknown) => e,
  );
  const text = err instanceof Error ? err.message : JSON.stringify(err);
  expect(text).toContain('no_such_tool');
  expect(text.match(/MCP error/g) ?? []).toHaveLength(1);
});
