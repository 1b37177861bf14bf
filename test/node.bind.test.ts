import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// A node bound to every interface: the CLI on the same machine reaches it through node.json, clients
// on the network through its addresses, name or CAIRN_ALLOWED_HOSTS, while a foreign Host header
// (DNS rebinding) is refused with or without CAIRN_ALLOWED_HOSTS.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode({ host: '0.0.0.0', allowedHosts: ['cairn.lan:4534'] });
});
afterAll(() => t.stop());

/** GET /health from `via` (an address of this machine) with the given headers; the status. */
const health = (headers: Record<string, string>, via = '127.0.0.1', node: TestNode = t) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: via, port: node.port, path: '/health', headers }, (res) => {
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

const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && !a.internal && a.family === 'IPv4');

it('refuses a loopback Host on a connection from another address', async () => {
  if (external === undefined) return; // No other address on this machine: nothing to connect from.
  expect(await health({ host: 'cairn.lan:4534' }, external.address)).toBe(200);
  expect(await health({ host: `127.0.0.1:${t.port}` }, external.address)).toBe(403);
});

it('without CAIRN_ALLOWED_HOSTS a wide bind still checks Host: its own addresses and name pass, others are 403', async () => {
  const open = await startTestNode({ host: '0.0.0.0' });
  try {
    const via = external?.address ?? '127.0.0.1';
    expect(await health({ host: 'evil.com' }, '127.0.0.1', open)).toBe(403);
    expect(await health({ host: `evil.com:${open.port}` }, via, open)).toBe(403);
    expect(await health({ host: `${hostname()}:${open.port}` }, via, open)).toBe(200);
    expect(await health({ host: `localhost:${open.port}` }, '127.0.0.1', open)).toBe(200);
    if (external !== undefined) expect(await health({ host: `${external.address}:${open.port}` }, via, open)).toBe(200);
    expect(open.node.networkUrls).toContain(`http://${hostname()}:${open.port}`);
  } finally {
    await open.stop();
  }
});

it('cairn serve on a wide bind announces the URLs it is reachable at', async () => {
  if (external === undefined) return; // No other address on this machine to announce.
  const { dir, cleanup } = await tempDir('bind-banner');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--host', '0.0.0.0', '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    for (let i = 0; i < 100 && !err.includes('from the network'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(err).toMatch(new RegExp(`from the network: .*http://${external.address.replaceAll('.', '\\.')}:\\d+`));
    expect(err).toContain(`http://${hostname()}:`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await cleanup();
  }
});

// Found by QA: `CAIRN_ALLOWED_HOSTS="a.lan:1, cairn.lan:4534"` kept the space, so the second name
// matched no Host header and its clients got 403.
it('cairn serve takes CAIRN_ALLOWED_HOSTS written with spaces after the commas', async () => {
  const { dir, cleanup } = await tempDir('bind-allowed');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: {
      ...process.env,
      CAIRN_LOG_LEVEL: 'silent',
      CAIRN_ADMIN_TOKEN: ADMIN,
      CAIRN_ALLOWED_HOSTS: 'a.lan:1, cairn.lan:4534 ',
    },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 100 && !existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
    const port = Number(
      new URL((JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { url: string }).url).port,
    );
    const at = { port, dataDir: dir } as TestNode;
    expect(await health({ host: 'cairn.lan:4534' }, '127.0.0.1', at)).toBe(200);
    expect(await health({ host: 'a.lan:1' }, '127.0.0.1', at)).toBe(200);
    expect(await health({ host: 'evil.example:4534' }, '127.0.0.1', at)).toBe(403);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await cleanup();
  }
});
