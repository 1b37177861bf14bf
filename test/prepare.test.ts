import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, expect, it } from 'vitest';

// `npx cairn` in a checkout: npm installs the checkout into its own cache and runs `prepare`
// there (npm_command "exec"). A whole build in that step printed nothing for 20–40 s, and one
// interrupted left npm's cache entry broken for every later `npx cairn`.

const root = fileURLToPath(new URL('../', import.meta.url));
const prepare = join(root, 'scripts/prepare.mjs');
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'cairn-prepare-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** `prepare` with no `npm` on PATH: a build it tries to start fails, so the exit says whether it built. */
function prepareWithoutNpm(npmCommand: string) {
  const env = { ...process.env, PATH: scratch, npm_command: npmCommand };
  return run(process.execPath, [prepare], { cwd: root, env }).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
  );
}

it("uses the checkout's build as it is when npx installs the checkout", async () => {
  expect(await prepareWithoutNpm('exec')).toEqual({ code: 0, stderr: '' });
});

it('builds on npm install and npm ci', async () => {
  for (const command of ['install', 'ci']) {
    const r = await prepareWithoutNpm(command);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('could not run `npm run build`');
  }
});

/**
 * npx: beside this Node, else the first on PATH. The Node that `npm run test:node22` runs the
 * suite on comes from the `node` npm package, which has no npx beside it.
 */
function npx(): string {
  const dirs = [dirname(process.execPath), ...(process.env.PATH ?? '').split(':')];
  const found = dirs.map((d) => join(d, 'npx')).find((p) => existsSync(p));
  if (found === undefined) throw new Error('no npx beside node or on PATH');
  return found;
}

it('npx cairn in the checkout runs its CLI without building again', async () => {
  // Only `node` and `sh` on PATH: a build started by npx's install of the checkout cannot run.
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync('/bin/sh', join(bin, 'sh'));
  const cache = join(scratch, 'npm-cache');
  // Without the `-c`/`-p` of an `npx -p node@22 -c 'vitest run'` around this suite, which npm
  // hands down as npm_config_call/npm_config_package and a nested npx would take as its own.
  const { npm_config_call: _call, npm_config_package: _package, ...outer } = process.env;
  const env = { ...outer, PATH: bin, npm_config_cache: cache, npm_config_update_notifier: 'false' };
  const { stdout } = await run(npx(), ['cairn', '--version'], { cwd: root, env });
  expect(stdout.trim()).toMatch(/^cairn \d+\.\d+\.\d+$/);
  const entries = readdirSync(join(cache, '_npx'));
  expect(entries.length).toBe(1);
  expect(existsSync(join(cache, '_npx', entries[0] as string, 'package.json'))).toBe(true);
}, 60_000);
