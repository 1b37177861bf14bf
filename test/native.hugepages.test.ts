import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { tempDir } from './helpers.js';

const exec = promisify(execFile);
const ENGINE = fileURLToPath(new URL('../dist/index.js', import.meta.url));

// A process that opens a store prints whether the kernel would give it transparent huge pages
// before and after the engine loaded (`THP_enabled` in /proc/self/status, the process's
// PR_SET_THP_DISABLE flag; children inherit it, and this test file never loads the engine itself).
const PROBE = `
const thp = () => Number(/THP_enabled:\\s*(\\d)/.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))[1]);
const before = thp();
import(process.argv[1]).then(async ({ Store }) => {
  const store = await Store.open(process.argv[2]);
  await store.close();
  console.log(JSON.stringify({ before, after: thp() }));
});`;

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('thp'));
});

afterEach(async () => {
  await cleanup();
});

async function probe(env: NodeJS.ProcessEnv): Promise<{ before: number; after: number }> {
  const base = { ...process.env };
  delete base.MIMALLOC_ALLOW_THP;
  const { stdout } = await exec(process.execPath, ['-e', PROBE, ENGINE, dir], { env: { ...base, ...env } });
  return JSON.parse(stdout) as { before: number; after: number };
}

it('the engine declines transparent huge pages by default', async () => {
  expect(await probe({})).toEqual({ before: 1, after: 0 });
});

it('MIMALLOC_ALLOW_THP=1 keeps them', async () => {
  expect(await probe({ MIMALLOC_ALLOW_THP: '1' })).toEqual({ before: 1, after: 1 });
});
