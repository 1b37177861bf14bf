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
  expect(Math.max(...spent)).toBeGreaterThan(0.9 * total);
});
