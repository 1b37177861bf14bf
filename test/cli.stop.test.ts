import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { stopNode } from '../ts/cli/stop.js';
import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn stop`: the node of a data dir asked to shut down gracefully and waited for, so the next
// command opens the store; no node, or a node.json a dead node left, is no failure; a pid that
// does not hold the store is never signalled.

const ADMIN = 'seeded-admin-token-for-the-stop-test-000000';
let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-stop'));
});
afterEach(async () => {
  const running = children.splice(0).filter((c) => c.exitCode === null && c.signalCode === null);
  const gone = running.map(exited);
  for (const c of running) c.kill('SIGKILL');
  await Promise.all(gone);
  await cleanup();
});

const exited = (c: ChildProcess) =>
  new Promise<number | string | null>((resolve) => c.once('exit', (code, signal) => resolve(code ?? signal)));

/** Starts `cairn serve` on the data dir in the background (any free port); its URL and pid once it runs. */
async function serve(): Promise<{ child: ChildProcess; url: string; pid: number }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  children.push(child);
  const file = join(dir, 'node.json');
  for (let i = 0; i < 150 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  const { url, pid } = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number };
  expect(pid).toBe(child.pid);
  return { child, url, pid };
}

/** A note written through the node, acknowledged. */
async function writeNote(url: string, key: string): Promise<void> {
  const res = await fetch(`${url}/v1/memory/note_write`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ key, value: { text: `kept ${key}` }, kind: 'decision' }),
  });
  expect(res.status).toBe(200);
}

it('stops the node gracefully; the store then opens for the next command, and a write acknowledged before is kept', async () => {
  const { child, url, pid } = await serve();
  for (let i = 0; i < 5; i++) await writeNote(url, `plan.${i}`);
  const done = exited(child);
  const r = await cairn(['stop', '--data-dir', dir]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(`stopped the node at ${url} (pid ${pid})\n`);
  // Its own graceful shutdown: exit 0, node.json removed.
  expect(await done).toBe(0);
  expect(existsSync(join(dir, 'node.json'))).toBe(false);
  // The store is free: read directly, with no admin token (through a node it would need one).
  const show = await cairn(['memories', 'show', 'plan.4', '--data-dir', dir, '--json'], { CAIRN_ADMIN_TOKEN: '' });
  expect(show.code, show.stderr).toBe(0);
  expect(JSON.parse(show.stdout).notes).toMatchObject([{ value: { text: 'kept plan.4' } }]);

  // Started again, the node serves every write; stopped again with --json.
  const again = await serve();
  const res = await fetch(`${again.url}/v1/memory/note_list`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const keys = ((await res.json()) as { notes: { key: string }[] }).notes.map((n) => n.key).sort();
  expect(keys).toEqual(['plan.0', 'plan.1', 'plan.2', 'plan.3', 'plan.4']);
  const gone = exited(again.child);
  const json = await cairn(['stop', '--data-dir', dir, '--json']);
  expect(json.code, json.stderr).toBe(0);
  expect(JSON.parse(json.stdout)).toEqual({ stopped: true, dataDir: dir, url: again.url, pid: again.pid });
  expect(await gone).toBe(0);
});

it('with no node running says so and exits 0, twice, and on a data dir that does not exist', async () => {
  expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
  for (const where of [dir, dir, join(dir, 'none')]) {
    const r = await cairn(['stop', '--data-dir', where]);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `no node runs on ${where}\n`, '']);
    const json = await cairn(['stop', '--data-dir', where, '--json']);
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, { stopped: false, dataDir: where }]);
  }
});

it.each([
  ['a pid that is gone', false],
  ['a pid now given to an unrelated live process', true],
])('a node.json a killed node left, naming %s, is said as such and nothing is signalled', async (_n, live) => {
  expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  children.push(other);
  if (!live) {
    other.kill('SIGKILL');
    await exited(other);
  }
  const pid = other.pid as number;
  const url = 'http://127.0.0.1:4999';
  const nodeJson = { url, pid, dataDir: dir, startedAt: new Date().toISOString() };
  writeFileSync(join(dir, 'node.json'), JSON.stringify(nodeJson));
  const r = await cairn(['stop', '--data-dir', dir]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(
    `no node runs on ${dir}; its node.json (the node at ${url}, pid ${pid}) was left by a node that is gone\n`,
  );
  const json = await cairn(['stop', '--data-dir', dir, '--json']);
  expect(JSON.parse(json.stdout)).toEqual({ stopped: false, dataDir: dir, stale: { url, pid } });
  // The unrelated process was not signalled.
  expect(other.exitCode === null && other.signalCode === null).toBe(live);
});

it('a store held by a process that announces no node is named, not signalled', async () => {
  expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
  const held = await Store.open(dir);
  try {
    const json = await cairn(['stop', '--data-dir', dir, '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ stopped: false, dataDir: dir, heldBy: process.pid });
    const r = await cairn(['stop', '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`its store is held by pid ${process.pid}, which announces no node`);
  } finally {
    await held.close();
  }
});

it('a node that does not let go within the wait is said with its pid and what to do; it is sent nothing more', async () => {
  const { child, url, pid } = await serve();
  const done = exited(child);
  // Stopped (SIGSTOP), it cannot act on SIGTERM until it is continued.
  process.kill(pid, 'SIGSTOP');
  try {
    const err = await stopNode(dir, 300).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'UNAVAILABLE', details: [{ pid, url }] });
    expect((err as Error).message).toContain(`still holds ${dir} after 0.3 s`);
    expect((err as Error).message).toContain(`kill -KILL ${pid}`);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  // The SIGTERM it was sent is acted on once it runs: its graceful shutdown, exit 0.
  expect(await done).toBe(0);
  expect(existsSync(join(dir, 'node.json'))).toBe(false);
});
