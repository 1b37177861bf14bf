import { expect, it } from 'vitest';

import { Tokens } from '../ts/auth/tokens.js';
import { StoreError } from '../ts/engine/errors.js';
import { Store } from '../ts/engine/store.js';
import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode } from './node.js';

// Operations: logs keep tokens and memory contents out, the per-token rate limit, and a graceful
// close that lets in-flight writes finish.

it('logs carry request ids but no token and no memory contents at info level', async () => {
  const lines: string[] = [];
  const t = await startTestNode({ logLevel: 'info', logStream: { write: (l) => void lines.push(l) } });
  try {
    const { token } = await t.token({ agent: 'claude' });
    await t.call('POST', '/v1/memory/remember', { token, body: { content: 'The vault code is Xylophone-4417.' } });
    await t.call('POST', '/v1/memory/recall', { token, body: { subject: 'Xylophone-4417' } });
    await t.call('GET', '/v1/whoami', { token: 'cairn_wrong-token-that-should-not-be-logged-000' });
    const log = lines.join('');
    expect(log).toContain('reqId');
    expect(log).not.toContain(token);
    expect(log).not.toContain('cairn_wrong-token');
    expect(log).not.toContain('Xylophone');
  } finally {
    await t.stop();
  }
});

it('logs a request URL without its query string (it may name the user and scope)', async () => {
  const lines: string[] = [];
  const t = await startTestNode({ logLevel: 'info', logStream: { write: (l) => void lines.push(l) } });
  try {
    const { token } = await t.token({ agent: 'claude' });
    const r = await t.call('GET', '/v1/memory/status?user_id=jane.doe%40example.com&scope=medical', { token });
    expect(r.status).toBe(200);
    const log = lines.join('');
    expect(log).toContain('"url":"/v1/memory/status?…"');
    expect(log).not.toContain('jane.doe');
    expect(log).not.toContain('medical');
  } finally {
    await t.stop();
  }
});

it('a failing disk answers INTERNAL with no internals and logs the cause at error level (HTTP and MCP)', async () => {
  const lines: string[] = [];
  const t = await startTestNode({ logLevel: 'info', logStream: { write: (l) => void lines.push(l) } });
  try {
    const { token } = await t.token({ agent: 'claude' });
    // The disk is outside the product: its failure is simulated where the engine reports it.
    const cause = 'write /var/cairn/wal.cairn: No space left on device (os error 28)';
    t.node.store.knowledge = () => Promise.reject(new StoreError('STORE_IO', cause));
    const http = await t.call('POST', '/v1/memory/recall', { token, body: { subject: 'Ada' } });
    expect(http.status).toBe(500);
    expect(http.body.error?.code).toBe('INTERNAL');
    const client = await mcpClient(t.url, token);
    const mcp = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'Ada' } }));
    await client.close();
    expect(mcp.isError).toBe(true);
    expect((mcp.body.error as { code?: string }).code).toBe('INTERNAL');
    for (const reply of [JSON.stringify(http.body), JSON.stringify(mcp.body)]) expect(reply).not.toContain('wal.cairn');
    const errors = lines.map((l) => JSON.parse(l) as { level: number; err?: { message?: string } });
    const logged = errors.filter((l) => l.level >= 50 && l.err?.message === cause);
    expect(logged).toHaveLength(2);
  } finally {
    await t.stop();
  }
});

it('a token past its rate limit gets 429 RATE_LIMITED; another token is unaffected', async () => {
  const t = await startTestNode({ rateLimit: 5 });
  try {
    const a = (await t.token({ agent: 'a' })).token;
    const b = (await t.token({ agent: 'b' })).token;
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) codes.push((await t.call('GET', '/v1/whoami', { token: a })).status);
    expect(codes.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    const limited = await t.call('GET', '/v1/whoami', { token: a });
    expect(limited.status).toBe(429);
    expect(limited.body.error?.code).toBe('RATE_LIMITED');
    expect((await t.call('GET', '/v1/whoami', { token: b })).status).toBe(200);
    expect((await t.call('GET', '/health', { token: null })).status).toBe(200);
  } finally {
    await t.stop();
  }
});

it('close lets in-flight writes finish, turns later requests away, closes the store, removes node.json', async () => {
  let arrived = 0;
  const t = await startTestNode({
    logLevel: 'info',
    logStream: { write: (l) => void (l.includes('incoming request') && arrived++) },
  });
  // Token creation is a durable store write served by the node itself, so this test needs no verb.
  const create = (i: number) =>
    t.call('POST', '/v1/admin/tokens', { body: { agent: `agent-${i}` } }).then(
      (r) => r.status,
      () => 0,
    );
  const inFlight = Array.from({ length: 20 }, (_, i) => create(i));
  while (arrived < 20) await new Promise((r) => setTimeout(r, 1));
  const closed = t.node.close();
  const late = await create(99);
  await closed;
  // Every request that arrived before the close finished with its write.
  expect(await Promise.all(inFlight)).toEqual(Array(20).fill(200));
  // One that came during the drain was turned away whole (503 UNAVAILABLE) or not connected (0).
  expect([0, 503]).toContain(late);
  const { existsSync } = await import('node:fs');
  expect(existsSync(`${t.dataDir}/node.json`)).toBe(false);
  const store = await Store.open(t.dataDir);
  try {
    const agents = (await new Tokens(store).list()).map((x) => x.agent);
    for (let i = 0; i < 20; i++) expect(agents).toContain(`agent-${i}`);
    expect(agents).not.toContain('agent-99');
  } finally {
    await store.close();
  }
  await t.stop();
});
