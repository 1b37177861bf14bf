import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { assertCpuSupported, missingCpuFlags } from '../ts/native/cpu.js';
import { tempDir } from './helpers.js';

const MODERN = 'processor\t: 0\nflags\t\t: fpu sse4_2 pclmulqdq avx fma avx2 bmi2\n\nprocessor\t: 1\n';
const OLD = 'processor\t: 0\nflags\t\t: fpu sse4_2 pclmulqdq avx\n';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cpu'));
});

afterEach(async () => {
  await cleanup();
});

it('finds nothing missing on a CPU with AVX2 and FMA', () => {
  expect(missingCpuFlags(MODERN)).toEqual([]);
});

it('names each missing feature', () => {
  expect(missingCpuFlags(OLD)).toEqual(['avx2', 'fma']);
});

it('refuses to load on such a CPU with a message naming the feature', async () => {
  const path = join(dir, 'cpuinfo');
  await writeFile(path, OLD);
  if (process.platform === 'linux' && process.arch === 'x64') {
    expect(() => assertCpuSupported(path)).toThrow(/lacks avx2, fma/);
  }
  await writeFile(path, MODERN);
  expect(() => assertCpuSupported(path)).not.toThrow();
});

it('passes on this machine (which runs the engine)', () => {
  expect(() => assertCpuSupported()).not.toThrow();
});
