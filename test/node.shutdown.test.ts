import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { CLI, tempDir } from './helpers.js';
import { mcpClient, toolJson } from './mcp-client.js';

// `cairn serve` stopped by SIGTERM while clients hold connections open (DESIGN.md issue 4: in-flight
// writes finish and are durable). A node in its own process, as users run it; connections made by
// hand where the client must not decide when they end. Bounds are generous: a node that does not
// exit within EXIT_MS never would.

const ADMIN = 'cairn_shutdown-test-admin-token-0123456789abcd';
const EXIT_MS = 10_000;
let dir: string;
let cleanup: () => Promise<void>;
const started: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('shutdown'));
});
afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await cleanup();
});

interface Served {
  child: ChildProcess;
  url: string;
  /** Resolves with the exit code, or 'running' when the node has not exited within EXIT_MS. */
  exit: Promise<number | null | 'running'>;
  /** Resolves once the node says it is shutting down (the drain has begun). */
  draining: Promise<void>;
}

async function serve(): Promise<Served> {
  const nodeFile = join(dir, 'node.json');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let said = '';
  const draining = new Promise<void>((resolve) =>
    child.stderr?.on('data', (d: Buffer) => {
      said += d.toString();
      if (said.includes('shutting down')) resolve();
    }),
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  while (!existsSync(nodeFile)) await sleep(50);
  const { url } = JSON.parse(readFileSync(nodeFile, 'utf8')) as { url: string };
  return {
    child,
    url,
    exit: (async () => {
      await draining;
      return Promise.race([exited, sleep(EXIT_MS, 'running' as const)]);
    })(),
    draining,
  };
}

/** A connection made by hand, kept open until the node closes it; `text` resolves with all it received then. */
async function rawConnection(url: string): Promise<{ socket: Socket; text: Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  let got = '';
  socket.on('data', (d: Buffer) => {
    got += d.toString();
  });
  const text = new Promise<string>((resolve) => socket.once('close', () => resolve(got)));
  return { socket, text };
}

/** `text` once the node closed the connection, or 'open' when it still holds it after EXIT_MS. */
const closedByNode = (text: Promise<string>) => Promise.race([text, sleep(EXIT_MS, 'open' as const)]);

it('exits with an idle keep-alive connection open, closing it', async () => {
  const node = await serve();
  const { socket, text } = await rawConnection(node.url);
  socket.write(`GET /health HTTP/1.1\r\nHost: ${new URL(node.url).host}\r\n\r\n`);
  while (!socket.bytesRead) await sleep(20);
  node.child.kill('SIGTERM');
  expect(await node.exit).toBe(0);
  expect(await closedByNode(text)).toMatch(/^HTTP\/1\.1 200 /);
});

it('exits with an MCP client connected and idle', async () => {
  const node = await serve();
  const client = await mcpClient(node.url, ADMIN);
  try {
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    node.child.kill('SIGTERM');
    expect(await node.exit).toBe(0);
  } finally {
    await client.close();
  }
});

it('answers an MCP write in flight when the drain starts, with Connection: close, exits, and the write is there after a restart', async () => {
  const node = await serve();
  const client = await mcpClient(node.url, ADMIN);
  const transport = client.transport as StreamableHTTPClientTransport;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: {
      name: 'memory_note_write',
      arguments: { key: 'deploy-window', value: 'friday 18:00', kind: 'decision' },
    },
  });
  const { socket, text } = await rawConnection(node.url);
  // The request is under way (headers in) when SIGTERM comes; its last byte only once the drain began.
  socket.write(
    [
      'POST /v1/mcp HTTP/1.1',
      `Host: ${new URL(node.url).host}`,
      `Authorization: Bearer ${ADMIN}`,
      'Content-Type: application/json',
      'Accept: application/json, text/event-stream',
      `Mcp-Session-Id: ${transport.sessionId}`,
      `Mcp-Protocol-Version: ${transport.protocolVersion}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body.slice(0, -1),
    ].join('\r\n'),
  );
  await sleep(300);
  node.child.kill('SIGTERM');
  await node.draining;
  socket.write(body.slice(-1));
  const reply = await closedByNode(text);
  const [head = '', json = ''] = reply.split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 200 /);
  expect(head.toLowerCase()).toContain('connection: close');
  expect(JSON.parse(json)).toMatchObject({
    id: 7,
    result: { structuredContent: { key: 'deploy-window', version: 1 } },
  });
  expect(await node.exit).toBe(0);
  await client.close().catch(() => undefined);

  const again = await serve();
  const reader = await mcpClient(again.url, ADMIN);
  try {
    const listed = toolJson(await reader.callTool({ name: 'memory_note_list', arguments: { key: 'deploy-window' } }));
    expect(listed.body.notes).toMatchObject([{ key: 'deploy-window', value: 'friday 18:00' }]);
  } finally {
    await reader.close();
  }
});

it('exits when a client stalls mid-request, closing its connection', async () => {
  const node = await serve();
  const { socket, text } = await rawConnection(node.url);
  socket.write(
    `POST /v1/memory/note_write HTTP/1.1\r\nHost: ${new URL(node.url).host}\r\nAuthorization: Bearer ${ADMIN}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"key":',
  );
  await sleep(300);
  node.child.kill('SIGTERM');
  expect(await node.exit).toBe(0);
  expect(await closedByNode(text)).not.toBe('open');
});
