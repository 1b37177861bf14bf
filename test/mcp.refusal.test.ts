import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI, cairn } from './helpers.js';
import { toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// What `cairn mcp` says when its node refuses it or is not there (issue 4: "says exactly what to
// run"): on start, a refused token and a dead URL each named with the command that fixes it; in an
// open session, a revoked token reaches the model as the §3 tool error, not raw transport text.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.stop();
});

/** A loopback port nothing listens on. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

it('a wrong token: the node was reached and refused it, and what to run for a new one', async () => {
  const r = await cairn(['mcp', '--url', t.url], { CAIRN_TOKEN: 'cairn_not-a-token-of-this-node' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`the node at ${t.url} is running but refused CAIRN_TOKEN`);
  expect(r.stderr).toContain('UNAUTHENTICATED');
  expect(r.stderr).toContain('cairn token create --agent NAME');
  expect(r.stderr).not.toContain('cannot reach');
  expect(r.stderr).not.toContain('Streamable HTTP error');
});

it('a dead URL: no node runs there, and how to start one', async () => {
  const url = `http://127.0.0.1:${await deadPort()}`;
  const r = await cairn(['mcp', '--url', url], { CAIRN_TOKEN: 'cairn_whatever' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`no node is running at ${url}`);
  // With the URL's port: `cairn serve` alone listens on 4000, where the bridge does not look.
  expect(r.stderr).toMatch(new RegExp(`\`cairn serve --data-dir \\S+ --port ${new URL(url).port}\``));
  expect(r.stderr).not.toContain('fetch failed');
});

// Found by QA: a --url at another program (a dev server's port) printed its whole HTML error page.
it('a URL where another program answers: said as not a Cairn node, without its error page', async () => {
  const server = createHttpServer((_req, res) => {
    res.writeHead(501, { 'content-type': 'text/html' });
    res.end('<!DOCTYPE HTML><html><body>Unsupported method</body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  try {
    const r = await cairn(['mcp', '--url', url], { CAIRN_TOKEN: 'cairn_whatever' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the server at ${url} answered HTTP 501 without a Cairn error: is it a Cairn node`);
    expect(r.stderr).not.toContain('<html>');
  } finally {
    await new Promise((r) => server.close(r));
  }
});

it('a token revoked during a session: tool calls get the §3 tool error saying what to do', async () => {
  const { token, id } = await t.token({ agent: 'desktop', user: 'ann' });
  const client = new Client({ name: 'refusal-test', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--url', t.url],
      env: { ...(process.env as Record<string, string>), CAIRN_TOKEN: token },
      stderr: 'pipe',
    }),
  );
  try {
    expect(toolJson(await client.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
    expect((await t.call('DELETE', `/v1/admin/tokens/${id}`)).status).toBe(200);
    const r = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(r.isError).toBe(true);
    const error = r.body.error as { code: string; message: string; details: unknown[] };
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).toContain('cairn token create');
    expect(error.message).toContain('CAIRN_TOKEN');
    expect(error.message).not.toContain('Streamable HTTP error');
    expect(Array.isArray(error.details)).toBe(true);
    // A request that is not a tool call is refused with the node's code, not transport text.
    const listed = await client.listTools().then(
      () => null,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    expect(listed).toContain('UNAUTHENTICATED');
    expect(listed).not.toContain('Streamable HTTP error');
  } finally {
    await client.close();
  }
});
