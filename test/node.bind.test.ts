import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { cairn } from './helpers.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// A node bound to every interface with CAIRN_ALLOWED_HOSTS: the CLI on the same machine reaches it
// through node.json, while a foreign Host header (DNS rebinding) is still refused.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode({ host: '0.0.0.0', allowedHosts: ['cairn.lan:4534'] });
});
afterAll(() => t.stop());

/** GET /health from `via` (an address of this machine) with the given headers; the status. */
const health = (headers: Record<string, string>, via = '127.0.0.1') =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: via, port: t.port, path: '/health', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });

it('node.json records a loopback URL for a wildcard bind', () => {
  expect(t.url).toBe(`http://127.0.0.1:${t.port}`);
  const file = JSON.parse(readFileSync(join(t.dataDir, 'node.json'), 'utf8')) as { url: string };
  expect(file.url).toBe(t.url);
});

it('the CLI reaches its own node: token list and check', async () => {
  const env = { CAIRN_ADMIN_TOKEN: ADMIN };
  const list = await cairn(['token', 'list', '--data-dir', t.dataDir, '--json'], env);
  expect(list.stderr).toBe('');
  expect(list.code).toBe(0);
  const check = await cairn(['check', '--data-dir', t.dataDir, '--json'], env);
  expect(check.stderr).not.toContain('FORBIDDEN');
  expect(check.code).toBe(0);
});

it('accepts an allowed host and loopback names from this machine; refuses a foreign host', async () => {
  expect(await health({ host: 'cairn.lan:4534' })).toBe(200);
  expect(await health({ host: `127.0.0.1:${t.port}` })).toBe(200);
  expect(await health({ host: `localhost:${t.port}` })).toBe(200);
  expect(await health({ host: `evil.example:${t.port}` })).toBe(403);
  expect(await health({ host: `localhost:${t.port}`, origin: 'http://evil.example' })).toBe(403);
});

it('refuses a loopback Host on a connection from another address', async () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && !a.internal && a.family === 'IPv4');
  if (external === undefined) return; // No other address on this machine: nothing to connect from.
  expect(await health({ host: 'cairn.lan:4534' }, external.address)).toBe(200);
  expect(await health({ host: `127.0.0.1:${t.port}` }, external.address)).toBe(403);
});
