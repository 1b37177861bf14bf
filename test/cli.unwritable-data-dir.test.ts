import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { asUserCommand, cairn, tempDir } from './helpers.js';

// `serve` and `init` on a data dir this user cannot write (or make) said so, and what to do,
// where they said the engine's "locking the store directory: Permission denied (os error 13)"
// and Node's "EACCES: permission denied, mkdir …" (found by the new-user audit).

let root: string;
let cleanup: () => Promise<void>;
const exec = promisify(execFile);

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('unwritable-dir'));
});
afterEach(async () => {
  if (existsSync(join(root, 'locked'))) chmodSync(join(root, 'locked'), 0o700);
  await cleanup();
});

/** `cairn ...args` as a user the modes bind (root without the capabilities that override them). */
async function asUser(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [file, all] = asUserCommand(args);
  const r: { code?: number; stdout: string; stderr: string } = await exec(file, all, {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent' },
  }).catch((err: { code: number; stdout: string; stderr: string }) => err);
  return { code: r.code ?? 0, stdout: r.stdout, stderr: r.stderr };
}

it('serve and init on a data dir this user cannot write say so and what to do, and make nothing', async () => {
  const locked = join(root, 'locked');
  mkdirSync(locked, { mode: 0o700 });
  chmodSync(locked, 0o500);
  const missing = join(locked, 'store');

  const serve = await asUser(['serve', '--data-dir', locked, '--port', '0']);
  expect(serve.code).toBe(2);
  expect(serve.stderr).toContain(
    `cairn serve: cannot write ${locked} (EACCES): run this command as the user that owns`,
  );
  expect(serve.stderr).toContain('or choose another --data-dir');
  expect(serve.stderr).not.toContain('os error');

  const serveMissing = await asUser(['serve', '--data-dir', missing, '--port', '0']);
  expect(serveMissing.code).toBe(2);
  expect(serveMissing.stderr).toContain(`cannot make ${missing}: this user may not write ${locked} (EACCES)`);
  expect(serveMissing.stderr).not.toContain('mkdir');

  const init = await asUser(['init', '--data-dir', locked, '--json']);
  expect(init.code).toBe(1);
  expect(JSON.parse(init.stdout)).toMatchObject({
    error: { code: 'FORBIDDEN', details: [{ field: '--data-dir', message: 'EACCES' }] },
  });
  // Refused before the mode warning a store it could make would earn.
  expect(init.stderr).toBe('');
  expect(readdirSync(locked)).toEqual([]);
  expect(existsSync(missing)).toBe(false);
});

it('serve on a store whose files this user cannot write names the file, as doctor does', async () => {
  const store = join(root, 'locked');
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  chmodSync(join(store, 'data.cairn'), 0o400);
  const serve = await asUser(['serve', '--data-dir', store, '--port', '0']);
  chmodSync(join(store, 'data.cairn'), 0o600);
  expect(serve.code).toBe(2);
  expect(serve.stderr).toContain(`cannot write ${join(store, 'data.cairn')} (EACCES)`);
  expect(existsSync(join(store, 'node.json'))).toBe(false);
});
