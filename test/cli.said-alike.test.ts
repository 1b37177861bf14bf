import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store, WriteBatch } from '../ts/index.js';
import { asUserCommand, CLI, cairn, tempDir } from './helpers.js';

// Small things the operator's lifecycle probe found said differently, or not at all, depending on
// whether a node ran: each is now said one way.

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const exec = promisify(execFile);
const ADMIN = 'cairn_said-alike-test-admin-token-0123456789ab';

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('said-alike'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

/** `cairn ...args` as a user the modes bind (root without the capabilities that override them). */
async function asUser(args: string[]) {
  const [file, all] = asUserCommand(args);
  const r: { code?: number; stdout: string } = await exec(file, all, {
    env: { ...process.env, CAIRN_ADMIN_TOKEN: ADMIN },
  }).catch((err: { code: number; stdout: string }) => err);
  return { code: r.code ?? 0, body: JSON.parse(r.stdout) as unknown };
}

it('token revoke of an unknown id says the same with a node running and without', async () => {
  const data = join(root, 'data');
  expect((await cairn(['init', '--data-dir', data], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const revoke = (json: boolean) =>
    cairn(['token', 'revoke', 'nosuchid', '--data-dir', data, ...(json ? ['--json'] : [])], {
      CAIRN_ADMIN_TOKEN: ADMIN,
    });
  const offline = [await revoke(false), await revoke(true)];
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const online = [await revoke(false), await revoke(true)];
  expect(offline[0]).toMatchObject({ code: 1, stderr: 'cairn token: NOT_FOUND: no token has id nosuchid\n' });
  expect(online[0]).toEqual(offline[0]);
  expect(JSON.parse(offline[1]?.stdout ?? '')).toEqual({
    error: { code: 'NOT_FOUND', message: 'no token has id nosuchid', details: [] },
  });
  expect(online[1]).toEqual(offline[1]);
});

it('token list of a store with no token says so, rather than printing nothing', async () => {
  const data = join(root, 'data');
  await (await Store.open(data)).close();
  const r = await cairn(['token', 'list', '--data-dir', data]);
  expect(r).toMatchObject({ code: 0, stdout: 'no tokens (`cairn init` makes an admin token)\n' });
  expect(JSON.parse((await cairn(['token', 'list', '--data-dir', data, '--json'])).stdout)).toEqual({ tokens: [] });
});

it('a backup whose DEST fills up names DEST, not "the new data file" alone, the same with a node and without', async () => {
  const data = join(root, 'data');
  const store = await Store.open(data);
  for (let i = 0; i < 8; i++) {
    const batch = new WriteBatch();
    for (let j = 0; j < 64; j++) batch.put('t', `k${i}-${j}`, randomBytes(16 << 10));
    await store.write(batch);
  }
  await store.checkpoint();
  await store.close();
  // Files this run writes may not grow past 2 MiB: the 8 MiB copy fails as on a full disk.
  const dest = join(root, 'backup');
  const limited = async () => {
    const argv = [CLI, 'database', 'backup', dest, '--data-dir', data, '--json'];
    const r: { code?: number; stdout: string } = await exec(
      'bash',
      ['-c', `trap '' XFSZ; ulimit -S -f 2048; exec "$0" "$@"`, process.execPath, ...argv],
      { env: { ...process.env, CAIRN_ADMIN_TOKEN: ADMIN } },
    ).catch((err: { code: number; stdout: string }) => err);
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string; details: unknown[] } };
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toMatch(new RegExp(`^backing up into ${dest}: `));
    expect(error.details).toContainEqual(expect.objectContaining({ field: 'DEST' }));
    expect(existsSync(dest)).toBe(false);
  };
  await limited();
  expect((await cairn(['init', '--data-dir', data], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  await limited();
});

it('a backup DEST or export DIR this user cannot write is refused FORBIDDEN up front, a node running or not', async () => {
  const data = join(root, 'data');
  expect((await cairn(['init', '--data-dir', data], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const shut = join(root, 'shut');
  mkdirSync(shut, { mode: 0o555 });
  chmodSync(shut, 0o555);
  const backup = (dest: string) => asUser(['database', 'backup', dest, '--data-dir', data, '--json']);
  const exported = (dir: string) => asUser(['export', dir, '--allow-empty', '--data-dir', data, '--json']);
  const refused = (doing: string, field: string) => ({
    code: 1,
    body: {
      error: {
        code: 'FORBIDDEN',
        message: `cannot write ${shut} (EACCES): run the ${doing} as a user who may write there, or choose another ${field}`,
        details: [{ field, message: 'EACCES' }],
      },
    },
  });
  const all = async () => {
    for (const r of [await backup(join(shut, 'nightly')), await backup(shut)])
      expect(r).toEqual(refused('backup', 'DEST'));
    for (const r of [await exported(join(shut, 'pkg')), await exported(shut)])
      expect(r).toEqual(refused('export', 'DIR'));
  };
  await all();
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  await all();
  chmodSync(shut, 0o755);
});

it('an offline compact of a data dir this user cannot write is FORBIDDEN naming --data-dir, the store untouched', async () => {
  const data = join(root, 'data');
  expect((await cairn(['init', '--data-dir', data], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  // The store's own files stay writable, so commands that write only them (token list) still open it.
  chmodSync(data, 0o500);
  try {
    expect(await asUser(['token', 'list', '--data-dir', data, '--json'])).toMatchObject({ code: 0 });
    expect(await asUser(['database', 'compact', '--data-dir', data, '--json'])).toEqual({
      code: 1,
      body: {
        error: {
          code: 'FORBIDDEN',
          message: `cannot write ${data} (EACCES): run the compaction as the user that owns it (the installed service: sudo -u cairn …)`,
          details: [{ field: '--data-dir', message: 'EACCES' }],
        },
      },
    });
  } finally {
    chmodSync(data, 0o700);
  }
  expect((await cairn(['check', '--data-dir', data])).code).toBe(0);
});
