import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, tempDir } from './helpers.js';
import { toolJson } from './mcp-client.js';
import { startTestNode } from './node.js';

// A node that holds the store but does not answer (a stopped or hung process: the kernel still
// accepts its connections): every CLI command that goes through it says UNAVAILABLE and exits 1
// within CAIRN_NODE_WAIT_MS, instead of waiting forever; a node that answers /health is given all
// the time its reply takes. The node here is a stand-in advertised in node.json, as a node is.

let dir: string;
let cleanup: () => Promise<void>;
let data: string;
let servers: (Server | HttpServer)[];
let sockets: Socket[];
let held: Store;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-unanswered'));
  data = join(dir, 'data');
  // This process holds the store as the stand-in node's process would: a node.json whose
  // process does not hold the store's lock is one a killed node left, and is ignored.
  held = await Store.open(data);
  servers = [];
  sockets = [];
});
afterEach(async () => {
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
  await held.close();
  await cleanup();
});

/** Advertises a node at `port` in the data dir, as `cairn serve` does (its pid: this process, which holds the store). */
function advertise(port: number) {
  const node = {
    url: `http://127.0.0.1:${port}`,
    pid: process.pid,
    dataDir: data,
    startedAt: new Date().toISOString(),
  };
  writeFileSync(join(data, 'node.json'), JSON.stringify(node), { mode: 0o600 });
}

/** A "node" that accepts connections and never says a word; advertised in the data dir. */
async function silentNode(): Promise<void> {
  const server = createServer((socket) => {
    sockets.push(socket);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  advertise((server.address() as { port: number }).port);
}

/** `cairn ...args` in its own process, killed after `killMs` (a hang fails the test, not the run). */
function run(args: string[], env: NodeJS.ProcessEnv, killMs = 12_000) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) => {
    const started = Date.now();
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ...env }, timeout: killMs },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : null;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

const WAIT = { CAIRN_NODE_WAIT_MS: '600', CAIRN_ADMIN_TOKEN: 'cairn_some-admin-token' };

it('every command through a node that does not answer says UNAVAILABLE and exits 1, within the wait', async () => {
  await silentNode();
  const file = join(dir, 'lines.jsonl');
  writeFileSync(file, `${JSON.stringify({ kind: 'entity', id: '1', name: 'A' })}\n`);
  const commands = [
    ['token', 'list'],
    ['token', 'create', '--agent', 'a'],
    ['token', 'revoke', 'abc'],
    ['check'],
    ['database', 'check'],
    ['database', 'backup', join(dir, 'backup')],
    ['database', 'compact'],
    ['memories', 'list'],
    ['memories', 'show', 'k'],
    ['export', join(dir, 'out')],
    ['import', file],
  ];
  const results = await Promise.all(commands.map((c) => run([...c, '--data-dir', data, '--json'], WAIT)));
  for (const [i, r] of results.entries()) {
    const said = `${commands[i]?.join(' ')}: ${r.stdout}${r.stderr}`;
    expect(r.code, said).toBe(1);
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
    expect(error.code, said).toBe('UNAVAILABLE');
    expect(error.message, said).toContain('does not answer (nothing for 0.6 s)');
    expect(error.message, said).toContain(`pid ${process.pid}`);
    expect(r.ms, said).toBeLessThan(8000);
  }
  // The text form says it on one line, no stack.
  const text = await run(['token', 'list', '--data-dir', data], WAIT);
  expect(text.code).toBe(1);
  expect(text.stderr).toMatch(/^cairn token: the node at http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) does not answer/);
  expect(text.stderr.trim().split('\n')).toHaveLength(1);
  // The export left no records.jsonl.
  expect(existsSync(join(dir, 'out', 'records.jsonl'))).toBe(false);
});

it('cairn mcp: a first session the node does not answer exits 1 saying UNAVAILABLE, within the wait', async () => {
  await silentNode();
  const r = await run(['mcp', '--data-dir', data], { CAIRN_TOKEN: 'cairn_x', CAIRN_NODE_WAIT_MS: '600' });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain('UNAVAILABLE: the node at http://127.0.0.1:');
  expect(r.stderr).toContain('does not answer (nothing for 0.6 s)');
  expect(r.ms).toBeLessThan(8000);
});

it('a node that answers /health is waited for however long its reply takes', async () => {
  // A reply well past the wait, as a backup or compact of a big store answers only when done.
  const server = createHttpServer((req, res) => {
    const reply = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"tokens":[]}');
    if (req.url === '/health') reply();
    else setTimeout(reply, 2500);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  advertise((server.address() as { port: number }).port);
  const r = await run(['token', 'list', '--data-dir', data, '--json'], WAIT);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ tokens: [] });
  expect(r.ms).toBeGreaterThan(2500);
});

it('a CAIRN_NODE_WAIT_MS that is not a whole number of ms ≥ 1 is bad usage, naming it', async () => {
  await silentNode();
  for (const bad of ['0', 'soon', '1.5']) {
    const r = await run(['token', 'list', '--data-dir', data], { ...WAIT, CAIRN_NODE_WAIT_MS: bad });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('CAIRN_NODE_WAIT_MS');
  }
});

it('cairn doctor says plainly that the node does not answer', async () => {
  await silentNode();
  const r = await run(['doctor', '--data-dir', data, '--json'], { HOME: dir, XDG_CONFIG_HOME: dir, CODEX_HOME: dir });
  expect(r.code).toBe(1);
  const { findings } = JSON.parse(r.stdout) as { findings: { check: string; state: string; detail: string }[] };
  const node = findings.find((f) => f.check === 'node');
  expect(node?.state).toBe('problem');
  expect(node?.detail).toMatch(/^http:\/\/127\.0\.0\.1:\d+ \(pid \d+\) does not answer within 3 s: it may be stopped/);
  expect(node?.detail).not.toMatch(/Error|aborted/);
});

it('an export interrupted (SIGINT) while it waits on the node leaves no records.jsonl', async () => {
  // It says who the token is (an admin), then never answers the export.
  const server = createHttpServer((req, res) => {
    if (req.url === '/v1/whoami') res.writeHead(200, { 'content-type': 'application/json' }).end('{"role":"admin"}');
    else sockets.push(req.socket);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  advertise((server.address() as { port: number }).port);
  const out = join(dir, 'out');
  const child = spawn(process.execPath, [CLI, 'export', out, '--data-dir', data], {
    env: { ...process.env, CAIRN_ADMIN_TOKEN: 'cairn_some-admin-token' },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 100 && !existsSync(join(out, 'records.jsonl')); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(out, 'records.jsonl'))).toBe(true);
    const ended = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
    child.kill('SIGINT');
    expect(await ended).toBe('SIGINT');
    expect(existsSync(join(out, 'records.jsonl'))).toBe(false);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

it('cairn mcp: a node that stops answering mid-session fails the tool call with UNAVAILABLE, within the wait', async () => {
  // A proxy in front of the node that stops passing bytes either way when frozen: the node looks
  // hung (connections accepted, nothing answered), as a stopped process does.
  let frozen = false;
  let nodePort = 0;
  const proxy = createServer((inbound) => {
    const outbound = connect(nodePort, '127.0.0.1');
    sockets.push(inbound, outbound);
    inbound.on('data', (d) => frozen || outbound.write(d));
    outbound.on('data', (d) => frozen || inbound.write(d));
    for (const [a, b] of [
      [inbound, outbound],
      [outbound, inbound],
    ] as const) {
      a.on('error', () => undefined);
      a.on('close', () => b.destroy());
    }
  });
  servers.push(proxy);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const proxied = `127.0.0.1:${(proxy.address() as { port: number }).port}`;
  // The node takes the proxy's Host (its DNS-rebinding guard would refuse it otherwise).
  const t = await startTestNode({ allowedHosts: [proxied] });
  nodePort = t.port;
  const client = new Client({ name: 'unanswered-test', version: '0' });
  try {
    const { token } = await t.token({ agent: 'desktop' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--url', `http://${proxied}`],
        env: { ...(process.env as Record<string, string>), CAIRN_TOKEN: token, CAIRN_NODE_WAIT_MS: '600' },
        stderr: 'pipe',
      }),
    );
    expect(toolJson(await client.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
    frozen = true;
    const started = Date.now();
    const hung = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(hung.isError).toBe(true);
    const error = hung.body.error as { code: string; message: string };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/does not answer/);
    // Well before the SDK's own 60 s request timeout.
    expect(Date.now() - started).toBeLessThan(15_000);
    // A write the node may still apply when it wakes says so, and what to do.
    const args = { key: 'hung/write', value: 1, kind: 'decision' };
    const write = toolJson(await client.callTool({ name: 'memory_note_write', arguments: args }));
    expect(write.isError).toBe(true);
    expect(write.body.error).toMatchObject({ code: 'UNAVAILABLE', details: [{ applied: 'unknown' }] });
    expect((write.body.error as { message: string }).message).toMatch(
      /does not answer.*may or may not have been applied: send it again with "idempotencyKey": "cairn-mcp:/,
    );
    // The key the bridge added, which the model did not know, named so it can apply the write once.
    const [{ idempotencyKey }] = (write.body.error as { details: [{ idempotencyKey: string }] }).details;
    expect(idempotencyKey).toMatch(/^cairn-mcp:/);
    frozen = false;
    const again = { ...args, idempotencyKey };
    const first = toolJson(await client.callTool({ name: 'memory_note_write', arguments: again }));
    expect(first.isError, JSON.stringify(first.body)).toBe(false);
    const second = toolJson(await client.callTool({ name: 'memory_note_write', arguments: again }));
    expect(second.body).toMatchObject({ version: first.body.version, replayed: true });
  } finally {
    await client.close();
    await t.stop();
  }
});
