import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';
import { mcpClient, toolJson } from './mcp-client.js';

// A node whose disk stops taking writes: a real node process whose files may not grow past 6 MiB
// (a soft RLIMIT_FSIZE, so a write past it fails with EFBIG as a full disk fails with ENOSPC).
// Its writes must then be refused as UNAVAILABLE, its reads go on, /health say why, and once the
// limit is lifted (the disk "freed") the node must reopen the store by itself, keeping every
// write it acknowledged, through a kill -9 too.
const ADMIN = 'cairn_disk-full-test-admin-0123456789abcdef';
const LIMIT_KIB = 6 * 1024;
const VALUE = 'y'.repeat(20_000);

let dir: string;
let cleanup: () => Promise<void>;
let node: ChildProcess | undefined;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('disk-full'));
});

// Each case starts its own node: it goes when the case ends, however it ended.
afterEach(async () => {
  if (node !== undefined && node.exitCode === null && node.signalCode === null) {
    node.kill('SIGKILL');
    await once(node, 'exit');
  }
  node = undefined;
});

afterAll(async () => {
  await cleanup();
});

/** Starts `cairn serve` on `dir` (with a file size limit when `limitKib` is given); resolves with its URL. */
async function serve(limitKib?: number): Promise<{ child: ChildProcess; url: string }> {
  rmSync(join(dir, 'node.json'), { force: true });
  const limit = limitKib === undefined ? '' : `trap '' XFSZ; ulimit -S -f ${limitKib}; `;
  const child = spawn('bash', ['-c', `${limit}exec "$0" "$@"`, process.execPath, CLI, 'serve', '--data-dir', dir], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN, CAIRN_PORT: '0' },
    stdio: 'ignore',
  });
  for (let i = 0; i < 200 && !existsSync(join(dir, 'node.json')); i++) await sleep(50);
  const { url } = JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { url: string };
  return { child, url };
}

/** The fields of the replies this test reads. */
interface Body {
  error?: { code: string; message: string };
  notes?: { value: unknown }[];
  status?: string;
  node?: { status: string; writes?: { state: string } };
  store?: { writes: string; reason: string; attempts?: number };
}

async function call(url: string, method: string, path: string, body?: object) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

const write = (url: string, key: string) =>
  call(url, 'POST', '/v1/memory/note_write', { key, kind: 'user_fact', value: { text: VALUE, key } });

function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

it('refuses writes while the disk takes none, keeps reads, and reopens by itself once it does', {
  timeout: 120_000,
}, async () => {
  const first = await serve(LIMIT_KIB);
  node = first.child;
  const { url } = first;
  const acked: string[] = [];
  let refusal: { status: number; body: Body } | undefined;
  for (let i = 0; i < 1000 && refusal === undefined; i++) {
    const r = await write(url, `k${i}`);
    if (r.status === 200) acked.push(`k${i}`);
    else refusal = r;
  }
  expect(acked.length).toBeGreaterThan(10);
  expect(refusal?.status).toBe(503);
  expect(refusal?.body.error?.code).toBe('UNAVAILABLE');
  expect(refusal?.body.error?.message).toContain('writes are stopped');

  // The node says why, reads go on, and every write is refused alike, over MCP too.
  const health = await call(url, 'GET', '/health');
  expect(health.status).toBe(503);
  expect(health.body).toMatchObject({ status: 'degraded', store: { writes: 'stopped' } });
  expect(health.body.store?.reason).toMatch(/File too large/);
  const read = await call(url, 'POST', '/v1/memory/note_list', { key: acked[0] });
  expect(read.status).toBe(200);
  expect(read.body.notes?.[0]?.value).toEqual({ text: VALUE, key: acked[0] });
  const client = await mcpClient(url, ADMIN);
  const viaMcp = toolJson(
    await client.callTool({ name: 'memory_note_write', arguments: { key: 'mcp', kind: 'user_fact', value: 1 } }),
  );
  await client.close();
  expect(viaMcp.isError).toBe(true);
  expect((viaMcp.body.error as { code: string }).code).toBe('UNAVAILABLE');
  expect((await write(url, 'still-stopped')).status).toBe(503);
  // An agent asking memory_status learns it too.
  const status = await call(url, 'GET', '/v1/memory/status');
  expect(status.status).toBe(200);
  expect(status.body.node).toMatchObject({ status: 'degraded', writes: { state: 'stopped' } });
  const doctor = await cairn(['doctor', '--data-dir', dir, '--json']);
  const { findings } = JSON.parse(doctor.stdout) as { findings: { check: string; state: string; detail: string }[] };
  const nodeFinding = findings.find((f) => f.check === 'node');
  expect(nodeFinding?.state).toBe('problem');
  expect(nodeFinding?.detail).toMatch(/writes stopped since .* \(growing the log: File too large/);

  // The disk is freed: the node reopens the store without a restart and takes writes again.
  execFileSync('prlimit', ['--pid', String(node.pid), '--fsize=unlimited:']);
  let healed = false;
  for (let i = 0; i < 400 && !healed; i++) {
    healed = (await call(url, 'GET', '/health')).status === 200;
    if (!healed) await sleep(100);
  }
  expect(healed).toBe(true);
  const after = await write(url, 'after');
  expect(after.status).toBe(200);
  acked.push('after');

  // Killed and started again, it holds every write it acknowledged, and its store checks clean.
  node.kill('SIGKILL');
  await once(node, 'exit');
  const second = await serve();
  node = second.child;
  for (const key of acked) {
    const r = await call(second.url, 'POST', '/v1/memory/note_list', { key });
    expect(r.body.notes?.[0]?.value, key).toEqual({ text: VALUE, key });
  }
  node.kill('SIGTERM');
  await once(node, 'exit');
  node = undefined;
  const check = await cairn(['database', 'check', '--data-dir', dir, '--json']);
  expect(check.code, check.stderr).toBe(0);
  expect(JSON.parse(check.stdout).ok).toBe(true);
});

it('never reopens a stopped store as a new one when its files went meanwhile', { timeout: 60_000 }, async () => {
  dir = join(dir, 'emptied');
  mkdirSync(dir);
  const started = await serve(LIMIT_KIB);
  node = started.child;
  let status = 200;
  for (let i = 0; i < 1000 && status === 200; i++) status = (await write(started.url, `g${i}`)).status;
  expect(status).toBe(503);
  // The data dir is emptied under the stopped node, then the disk takes writes again.
  for (const file of ['data.cairn', 'wal.cairn', 'LOCK']) rmSync(join(dir, file), { force: true });
  execFileSync('prlimit', ['--pid', String(node.pid), '--fsize=unlimited:']);
  await sleep(4_000);
  const health = await call(started.url, 'GET', '/health');
  expect(health.status).toBe(503);
  expect(health.body.store?.attempts).toBeGreaterThanOrEqual(2);
  expect(existsSync(join(dir, 'data.cairn'))).toBe(false);
  expect((await write(started.url, 'into-nothing')).status).toBe(503);
});

it('stops taking writes when the data dir is emptied under a running node, and says why', {
  timeout: 60_000,
}, async () => {
  // Found by a failure audit: the node answered 200 to writes into files no later start reads.
  dir = join(dir, 'removed');
  mkdirSync(dir);
  const started = await serve();
  node = started.child;
  expect((await write(started.url, 'before')).status).toBe(200);
  for (const file of ['data.cairn', 'wal.cairn', 'LOCK']) rmSync(join(dir, file), { force: true });
  let health = await call(started.url, 'GET', '/health');
  for (let i = 0; i < 100 && health.status === 200; i++) {
    await sleep(100);
    health = await call(started.url, 'GET', '/health');
  }
  expect(health.status).toBe(503);
  expect(health.body.store?.reason).toMatch(/data\.cairn was removed under the node/);
  const refused = await write(started.url, 'after');
  expect(refused.status).toBe(503);
  expect(existsSync(join(dir, 'data.cairn'))).toBe(false);
});

it('takes a compaction, which renames a new data file into place, as the same store', { timeout: 60_000 }, async () => {
  dir = join(dir, 'compacted');
  mkdirSync(dir);
  const started = await serve();
  node = started.child;
  expect((await write(started.url, 'before')).status).toBe(200);
  const compacted = await cairn(['database', 'compact', '--data-dir', dir], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(compacted.code, compacted.stderr).toBe(0);
  await sleep(2_500);
  expect((await call(started.url, 'GET', '/health')).status).toBe(200);
  expect((await write(started.url, 'after')).status).toBe(200);
});
