import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { findRunningNode } from '../ts/server/node-file.js';
import { CLI, cairn, tempDir } from './helpers.js';
import { toolJson } from './mcp-client.js';

// A desktop client's `cairn mcp` with no CAIRN_PORT in its config starts its node on port 4000.
// When another program held it (a development server; the node of a second store), the bridge
// failed to start at all, saying to choose another --port, which `cairn mcp` does not take (found
// by the new-user audit). It now starts the node on any free port and finds it in node.json.

let dir: string;
let cleanup: () => Promise<void>;
let blocker: Server | null = null;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('bridge-port'));
});
afterEach(async () => {
  const node = findRunningNode(dir);
  if (node !== null) {
    process.kill(node.pid, 'SIGTERM');
    for (let i = 0; i < 100 && existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise<void>((r) => (blocker === null ? r() : blocker.close(() => r())));
  blocker = null;
  await cleanup();
});

/** Holds 127.0.0.1:4000 unless something else already does (then it is taken all the same). */
async function takePort4000(): Promise<void> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(4000, '127.0.0.1', () => resolve(true));
  });
  if (listening) blocker = server;
}

it('cairn mcp starts its node on a free port when another program holds 4000 and CAIRN_PORT pins none', async () => {
  await takePort4000();
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  const { CAIRN_PORT: _pinned, ...env } = process.env as Record<string, string>;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--data-dir', dir],
    env: { ...env, CAIRN_TOKEN: init.token },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'port-taken', version: '0' });
  await client.connect(transport);
  try {
    const status = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(status.isError).toBe(false);
  } finally {
    await client.close();
  }
  const { url } = JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { url: string };
  expect(new URL(url).port).not.toBe('4000');
  expect(stderr).toContain(`another program listens on port 4000, so the node listens at ${url}`);
  expect(stderr).not.toContain('did not start');
});
