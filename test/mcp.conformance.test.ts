import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { npxEnv } from './helpers.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// The official MCP conformance suite against /v1/mcp. It sends no token, so a loopback proxy
// adds the admin token; it maps its own Host/Origin onto the node's and passes any other through,
// so the node's DNS-rebinding checks still see foreign hosts. It fetches Node 22 and the suite from
// the npm registry on first use.

const run = promisify(execFile);
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

let t: TestNode;
let proxy: Server;
let proxyPort: number;

beforeAll(async () => {
  t = await startTestNode();
  proxy = createServer((req, res) => {
    const mine = `127.0.0.1:${proxyPort}`;
    const theirs = `127.0.0.1:${t.port}`;
    const headers = { ...req.headers, authorization: `Bearer ${ADMIN}` };
    if (headers.host === mine || headers.host === `localhost:${proxyPort}`) headers.host = theirs;
    if (typeof headers.origin === 'string') headers.origin = headers.origin.replace(`:${proxyPort}`, `:${t.port}`);
    const up = request({ host: '127.0.0.1', port: t.port, method: req.method, path: req.url, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyPort = (proxy.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await t.stop();
});

it.each(SCENARIOS)(
  'passes the conformance scenario %s',
  async (scenario) => {
    const url = `http://127.0.0.1:${proxyPort}/v1/mcp`;
    const args = ['-y', '-p', 'node@22', '-p', '@modelcontextprotocol/conformance@0.1.16'];
    args.push('conformance', 'server', '--url', url, '--scenario', scenario);
    let out: string;
    try {
      const r = await run('npx', args, { env: npxEnv, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
      out = r.stdout + r.stderr;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`conformance ${scenario} failed:\n${e.stdout ?? ''}\n${e.stderr ?? e.message}`);
    }
    // The suite exits non-zero on a failed check (execFile then throws); the summary says so too.
    expect(out).toMatch(/Passed: (\d+)\/\1, 0 failed/);
  },
  300_000,
);
