import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { tempDir } from './helpers.js';

// The verb pool (bindings/src/verb_pool.rs) wakes the thread that fell asleep last, so calls made
// one after another after a burst are served by one warm thread, not rotated over every thread
// the burst started.
const FIXTURE = fileURLToPath(new URL('./fixtures/pool-reuse.mjs', import.meta.url));

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('pool'));
});

afterEach(async () => {
  await cleanup();
});

it('serves calls made one after another on one thread after a burst started many', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [FIXTURE, dir], { timeout: 20_000 });
  const { threads, spent } = JSON.parse(stdout) as { threads: number; spent: number[] };
  expect(threads).toBeGreaterThan(4);
  const total = spent.reduce((a, b) => a + b, 0);
  // Woken coldest first, the calls spread over every thread (the busiest had at most ~1/threads
  // of them); warmest first, one thread serves nearly all. On a loaded box a call now and then
  // still lands on another thread before the warm one sleeps again (0.895 seen at load ~8), so
  // the bound sits between the two, well clear of both.
  expect(Math.max(...spent)).toBeGreaterThan(0.6 * total);
});
