import { execFile } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { tempDir } from './helpers.js';

// CAIRN_NATIVE_PATH is how two builds of the engine are compared side by side. A path that named
// nothing was passed over without a word and the local build loaded: an A/B run measured one
// build twice.

const exec = promisify(execFile);
const ADDON = fileURLToPath(new URL('../ts/native/cairn.linux-x64-gnu.node', import.meta.url));
const INDEX = new URL('../dist/index.js', import.meta.url).href;

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('native-override'));
});
afterEach(async () => {
  await cleanup();
});

/** Opens and closes a store in a fresh process with `CAIRN_NATIVE_PATH` set to `path`. */
function openWith(path: string) {
  const script = `const { Store } = await import(${JSON.stringify(INDEX)});
const s = await Store.open(${JSON.stringify(join(dir, 'store'))}); await s.close(); console.log('opened');`;
  return exec(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, CAIRN_NATIVE_PATH: path },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

it('loads the addon CAIRN_NATIVE_PATH names', async () => {
  const copy = join(dir, 'other-build.node');
  copyFileSync(ADDON, copy);
  const r = await openWith(copy);
  expect(r.stdout.trim()).toBe('opened');
});

it('refuses a CAIRN_NATIVE_PATH that names no file, naming it', async () => {
  const missing = join(dir, 'no-such-build.node');
  const r = await openWith(missing);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(`CAIRN_NATIVE_PATH names no file: ${missing}`);
});
