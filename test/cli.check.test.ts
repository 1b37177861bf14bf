import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store, WriteBatch } from '../ts/index.js';
import { cairn, tempDir } from './helpers.js';

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

it('fails clearly when there is no store, or on an unknown command', async () => {
  const missing = await cairn(['check', '--data-dir', `${dir}/nothing-here`]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('no store at');
  const unknown = await cairn(['frobnicate']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown command');
});

it('says who holds a locked store', async () => {
  await seed(dir);
  const store = await Store.open(dir);
  try {
    const { code, stderr } = await cairn(['check', '--data-dir', dir]);
    expect(code).toBe(2);
    expect(stderr).toContain('STORE_LOCKED');
    expect(stderr).toContain(`pid ${process.pid}`);
  } finally {
    await store.close();
  }
});
