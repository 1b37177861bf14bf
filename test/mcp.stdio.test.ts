import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// `cairn mcp` as an MCP client launches it: the built CLI on stdio, forwarding to a real node.

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
let t: TestNode;
let client: Client;

beforeAll(async () => {
  t = await startTestNode();
  const { token } = await t.token({ agent: 'claude-desktop', user: 'ann' });
  client = new Client({ name: 'stdio-test', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', t.url],
      env: { ...(process.env as Record<string, string>), CAIRN_TOKEN: token, CAIRN_SCOPE: 'stdio' },
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

it('lists the node’s tools', async () => {
  const { tools } = await client.listTools();
  expect(tools.map((x) => x.name)).toContain('memory_context');
  expect(tools).toHaveLength(15);
});

it('forwards a validation error as the same tool error JSON', async () => {
  const r = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'x', k: 0 } }));
  expect(r.isError).toBe(true);
  expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR' });
});

it('runs verbs as the token’s agent and user, in CAIRN_SCOPE', async () => {
  const status = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
  expect(status.body.identity).toMatchObject({ agent: 'claude-desktop', user: 'ann', scope: 'stdio' });
  const stored = toolJson(
    await client.callTool({
      name: 'memory_remember',
      arguments: { facts: { entities: [{ name: 'Ann', type: 'person' }] } },
    }),
  );
  expect(stored.isError).toBe(false);
  const recall = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'Ann' } }));
  expect(recall.body.state).toBe('answered');
});

it('a --url that is not an http(s) URL is bad usage, exit 2, not a node it could not reach', async () => {
  for (const url of ['notaurl', 'localhost:4000', 'ftp://127.0.0.1:4000']) {
    const err = await promisify(execFile)(process.execPath, [CLI, 'mcp', '--url', url], {
      env: { ...process.env, CAIRN_TOKEN: 'cairn_x' },
    }).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code, url).toBe(2);
    expect((err as { stderr: string }).stderr).toContain(
      `--url: give the node's URL, as http://HOST:PORT, got "${url}"`,
    );
  }
});

it('without CAIRN_TOKEN it says what to do and exits 2', async () => {
  const env = { ...process.env };
  delete env.CAIRN_TOKEN;
  const err = await promisify(execFile)(process.execPath, [CLI, 'mcp', '--url', t.url], { env }).catch(
    (e: { code: number; stderr: string }) => e,
  );
  expect((err as { code: number }).code).toBe(2);
  expect((err as { stderr: string }).stderr).toContain('cairn token create');
});
