import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store, WriteBatch } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// The CLI as users run it: the built `dist/cli/main.js`, in its own process.

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli'));
});

afterEach(async () => {
  await cleanup();
});

async function seed(path: string): Promise<void> {
  const store = await Store.open(path);
  await store.write(new WriteBatch().put('notes', 'a', '1').put('notes', 'b', '2').put('facts', 'x', 'y'));
  await store.close();
}

it('prints help', async () => {
  const { code, stdout } = await cairn(['--help']);
  expect(code).toBe(0);
  expect(stdout).toContain('cairn check [--data-dir DIR] [--json]');
});

it('checks a store and prints its report as JSON', async () => {
  await seed(dir);
  const { code, stdout } = await cairn(['check', '--data-dir', dir, '--json']);
  expect(code).toBe(0);
  const report = JSON.parse(stdout);
  expect(report.ok).toBe(true);
  expect(report.dataDir).toBe(dir);
  expect(report.problems).toEqual([]);
  expect(report.trees).toEqual(
    expect.arrayContaining([
      { name: 'notes', entries: 2 },
      { name: 'facts', entries: 1 },
    ]),
  );
});

it('finds the store through CAIRN_DATA_DIR and prints text', async () => {
  await seed(dir);
  const { code, stdout } = await cairn(['check'], { CAIRN_DATA_DIR: dir });
  expect(code).toBe(0);
  expect(stdout).toMatch(/^ok: /);
  expect(stdout).toContain('notes (2)');
});

it('fails clearly when there is no store (exit 1), or on an unknown command (bad usage: exit 2)', async () => {
  const missing = await cairn(['check', '--data-dir', `${dir}/nothing-here`]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('no store at');
  // An empty directory holds no store either, and none is made there.
  const empty = await cairn(['check', '--data-dir', dir]);
  expect(empty.code).toBe(1);
  expect(empty.stderr).toContain('no store at');
  expect(existsSync(join(dir, 'data.cairn'))).toBe(false);
  const unknown = await cairn(['frobnicate']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown command');
});

it('says who holds a locked store (a failed check: exit 1)', async () => {
  await seed(dir);
  const store = await Store.open(dir);
  try {
    const { code, stderr } = await cairn(['check', '--data-dir', dir]);
    expect(code).toBe(1);
    expect(stderr).toContain('STORE_LOCKED');
    expect(stderr).toContain(`pid ${process.pid}`);
  } finally {
    await store.close();
  }
});

it('checks the store of a running node through its admin API', async () => {
  await seed(dir);
  const admin = 'cairn_check-test-admin-0123456789abcdefghijklmnop';
  const node = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: admin },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 100 && !existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
    // A missing or refused admin token is a failed check (exit 1), not bad usage.
    const noToken = await cairn(['check', '--data-dir', dir], { CAIRN_ADMIN_TOKEN: '' });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('CAIRN_ADMIN_TOKEN');
    const wrong = await cairn(['database', 'check', '--data-dir', dir, '--json'], { CAIRN_ADMIN_TOKEN: 'cairn_wrong' });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout).error).toMatchObject({ code: 'UNAUTHENTICATED' });
    const { code, stdout, stderr } = await cairn(['check', '--data-dir', dir, '--json'], { CAIRN_ADMIN_TOKEN: admin });
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ ok: true, dataDir: dir, problems: [] });
    expect(report.trees).toEqual(expect.arrayContaining([{ name: 'notes', entries: 2 }]));
  } finally {
    node.kill('SIGTERM');
    await new Promise((r) => node.once('exit', r));
  }
});
