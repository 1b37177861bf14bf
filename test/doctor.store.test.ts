import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { asUserCommand, CLI, cairn, tempDir } from './helpers.js';

// `cairn doctor` says exactly what is not ready about a store: each case below was reported
// "ready" (exit 0) by the operator's lifecycle probe while `cairn serve` on it then failed, or
// with no word on what the CLI needed.

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const exec = promisify(execFile);
const ADMIN = 'cairn_doctor-store-test-admin-token-0123456789';

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('doctor-store'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

type Finding = { check: string; state: string; detail: string };

/** `cairn doctor --json` on `data`: its exit code and the finding named `check`. */
async function doctor(data: string, check: string, env: NodeJS.ProcessEnv = {}) {
  const r = await cairn(['doctor', '--json', '--data-dir', data], { CAIRN_ADMIN_TOKEN: '', ...env });
  const { findings } = JSON.parse(r.stdout) as { findings: Finding[] };
  return { code: r.code, finding: findings.find((f) => f.check === check) };
}

/** `cairn ...args` as a user the file modes bind (root without the capabilities that override them). */
async function asUser(args: string[]) {
  const [file, all] = asUserCommand(args);
  try {
    const { stdout, stderr } = await exec(file, all, { env: { ...process.env, CAIRN_LOG_LEVEL: 'silent' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    return err as { code: number; stdout: string; stderr: string };
  }
}

it('a data dir this user may read but not write is a problem, as `cairn serve` then fails', async () => {
  const data = join(root, 'data');
  expect((await cairn(['init', '--data-dir', data])).code).toBe(0);
  chmodSync(data, 0o500);
  try {
    const r = await asUser(['doctor', '--json', '--data-dir', data]);
    expect(r.code, r.stdout).toBe(1);
    const store = (JSON.parse(r.stdout) as { findings: Finding[] }).findings.find((f) => f.check === 'store');
    expect(store?.state).toBe('problem');
    expect(store?.detail).toContain(`this user cannot write ${data} (EACCES)`);
    expect(store?.detail).toContain('as the user that owns it');
    const serve = await asUser(['serve', '--data-dir', data, '--port', '0']);
    expect(serve.code).toBe(2);
  } finally {
    chmodSync(data, 0o700);
  }
});

it('a store another process holds, which announces no node, is a problem naming its pid', async () => {
  const data = join(root, 'data');
  const store = await Store.open(data);
  try {
    const { code, finding } = await doctor(data, 'store');
    expect(code).toBe(1);
    expect(finding?.state).toBe('problem');
    expect(finding?.detail).toContain(`held by another process (pid ${process.pid}`);
  } finally {
    await store.close();
  }
  expect((await doctor(data, 'store')).finding?.state).toBe('ok');
});

it('no store where a restore was cut off says to run the restore again, not only `cairn init`', async () => {
  const data = join(root, 'data');
  mkdirSync(join(data, '.restore-999999-1-0badc0de'), { recursive: true });
  const { code, finding } = await doctor(data, 'store');
  expect(code).toBe(1);
  expect(finding?.detail).toContain('a restore into it was cut off');
  expect(finding?.detail).toContain(`cairn database restore SRC --data-dir ${data}`);
});

it('with a node running, says whether CAIRN_ADMIN_TOKEN lets CLI commands through it', async () => {
  const data = join(root, 'data');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const made = await cairn(['token', 'create', '--agent', 'worker', '--data-dir', data, '--json'], {
    CAIRN_ADMIN_TOKEN: ADMIN,
  });
  const agent = (JSON.parse(made.stdout) as { token: string }).token;
  const url = (JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string }).url;

  const unset = await doctor(data, 'CAIRN_ADMIN_TOKEN');
  expect(unset).toMatchObject({ code: 0, finding: { state: 'note' } });
  expect(unset.finding?.detail).toContain('not set');
  const admin = await doctor(data, 'CAIRN_ADMIN_TOKEN', { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(admin).toMatchObject({ code: 0, finding: { state: 'ok', detail: `an admin token of the node at ${url}` } });
  const wrong = await doctor(data, 'CAIRN_ADMIN_TOKEN', { CAIRN_ADMIN_TOKEN: `${ADMIN}x` });
  expect(wrong).toMatchObject({ code: 1, finding: { state: 'problem' } });
  expect(wrong.finding?.detail).toContain('the node refuses it (401');
  const byAgent = await doctor(data, 'CAIRN_ADMIN_TOKEN', { CAIRN_ADMIN_TOKEN: agent });
  expect(byAgent).toMatchObject({ code: 1, finding: { state: 'problem' } });
  expect(byAgent.finding?.detail).toContain("agent worker's token (role agent), not an admin's");
});
