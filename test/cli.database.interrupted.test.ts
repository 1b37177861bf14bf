import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store, WriteBatch } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn database backup|restore` that fail or are interrupted (Ctrl-C, kill -9) leave nothing
// that blocks or misleads the next run (the failure audit's F5, F6 and F8).

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('cli-db-int'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await cleanup();
});

const PAGE = 4096;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A closed store in `dir` of about `mb` MiB of incompressible values in tree `t`. */
async function bigStore(dir: string, mb: number): Promise<void> {
  const store = await Store.open(dir);
  try {
    for (let i = 0; i < mb; i++) {
      const batch = new WriteBatch();
      for (let j = 0; j < 64; j++) batch.put('t', `k${i}-${j}`, randomBytes(16 << 10));
      await store.write(batch);
    }
    await store.checkpoint();
  } finally {
    await store.close();
  }
}

/** `cairn ...args` in its own process, interrupted with `signal` as soon as `started()` holds. */
async function interrupted(args: string[], started: () => boolean, signal: NodeJS.Signals) {
  const { child, exited } = await launched(args, started);
  child.kill(signal);
  return exited;
}

/** `cairn ...args` (with `env`) in its own process, once `started()` holds; and how it exits. */
async function launched(args: string[], started: () => boolean, env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, sig) => r({ code, signal: sig })),
  );
  while (!started()) {
    if (child.exitCode !== null) throw new Error(`cairn ${args.join(' ')} ended before it was interrupted`);
    await sleep(2);
  }
  return { child, exited: exited.then((how) => ({ ...how, stderr: () => stderr })) };
}

it('an offline backup that meets a damaged page fails and leaves neither its file nor the DEST it made', async () => {
  const data = join(root, 'data');
  await bigStore(data, 2);
  const file = join(data, 'data.cairn');
  const bytes = readFileSync(file);
  // Scribble over the values' pages (the tree's leaves are written before its branches).
  bytes.fill(0x5a, 8 * PAGE + 100, 24 * PAGE);
  writeFileSync(file, bytes);
  const dest = join(root, 'nightly', 'bkd');
  const r = await cairn(['database', 'backup', dest, '--data-dir', data, '--json']);
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stdout).error.details, r.stdout).toEqual([{ store: 'STORE_CORRUPT' }]);
  expect(existsSync(dest)).toBe(false);
  expect(readdirSync(root)).toEqual(['data', 'nightly']);
  // A DEST the user made is theirs: it stays, as empty as it was.
  const own = join(root, 'own');
  mkdirSync(own);
  expect((await cairn(['database', 'backup', own, '--data-dir', data])).code).toBe(1);
  expect(readdirSync(own)).toEqual([]);
});

it('an offline backup interrupted with Ctrl-C removes what it wrote and the DEST it made', async () => {
  const data = join(root, 'data');
  await bigStore(data, 48);
  const dest = join(root, 'bkd');
  const ended = await interrupted(
    ['database', 'backup', dest, '--data-dir', data],
    () => existsSync(join(dest, 'data.cairn.backup')),
    'SIGINT',
  );
  expect(ended.signal).toBe('SIGINT');
  expect(existsSync(dest)).toBe(false);
  const again = await cairn(['database', 'backup', dest, '--data-dir', data]);
  expect(again.code, again.stderr).toBe(0);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
});

/** A backup of about `mb` MiB in `root/backup`, for a restore to take a while. */
async function bigBackup(mb: number): Promise<string> {
  const data = join(root, 'data');
  await bigStore(data, mb);
  const backup = join(root, 'backup');
  const made = await cairn(['database', 'backup', backup, '--data-dir', data]);
  expect(made.code, made.stderr).toBe(0);
  return backup;
}

const staging = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('.restore-')) : []);

it('a restore interrupted with Ctrl-C removes its staging dirs and the target it made; into an existing target, leaves it empty', async () => {
  const backup = await bigBackup(48);
  const made = join(root, 'made');
  const first = await interrupted(
    ['database', 'restore', backup, '--data-dir', made],
    () => staging(made).length > 0,
    'SIGINT',
  );
  expect(first.signal).toBe('SIGINT');
  expect(existsSync(made)).toBe(false);
  const own = join(root, 'own');
  mkdirSync(own);
  const second = await interrupted(
    ['database', 'restore', backup, '--data-dir', own],
    () => staging(own).length > 0,
    'SIGINT',
  );
  expect(second.signal).toBe('SIGINT');
  expect(readdirSync(own)).toEqual([]);
});

it('a restore killed with kill -9 is retried: the retry removes the dead run’s staging dirs and restores', async () => {
  const backup = await bigBackup(48);
  const target = join(root, 'target');
  const killed = await interrupted(
    ['database', 'restore', backup, '--data-dir', target],
    () => staging(target).length > 0,
    'SIGKILL',
  );
  expect(killed.signal).toBe('SIGKILL');
  expect(staging(target).length).toBeGreaterThan(0);
  const retry = await cairn(['database', 'restore', backup, '--data-dir', target, '--json']);
  expect(retry.code, retry.stdout).toBe(0);
  expect(readdirSync(target)).toEqual(['data.cairn']);
});

/** This process's start time as Linux counts it (field 22 of /proc/self/stat), which marks the files a run names for itself. */
function ownStartTime(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
}

it('a restore removes staging dirs whose pid now names another process (their start times differ), and restores', async () => {
  const backup = await bigBackup(1);
  const target = join(root, 'target');
  // A dead restore's, its pid reused by a process that runs (this test's) but started at another time.
  const stale = `.restore-${process.pid}-1-0badc0de`;
  mkdirSync(join(target, stale), { recursive: true });
  writeFileSync(join(target, stale, 'data.cairn'), 'staged');
  const r = await cairn(['database', 'restore', backup, '--data-dir', target, '--json']);
  expect(r.code, r.stdout).toBe(0);
  expect(readdirSync(target)).toEqual(['data.cairn']);
});

it('a restore into a target holding a running restore’s staging dirs is refused naming them, and leaves them', async () => {
  const backup = await bigBackup(1);
  const target = join(root, 'target');
  // Named for this test's process, which runs: as a restore still at work would be.
  const live = `.restore-${process.pid}-0badc0de`;
  mkdirSync(join(target, live), { recursive: true });
  writeFileSync(join(target, live, 'data.cairn'), 'staged');
  const r = await cairn(['database', 'restore', backup, '--data-dir', target, '--json']);
  expect(r.code).toBe(1);
  const error = JSON.parse(r.stdout).error as { code: string; message: string };
  expect(error.code).toBe('VALIDATION_ERROR');
  expect(error.message).toContain(`it holds the staging dirs of another restore (${live})`);
  expect(readdirSync(join(target, live))).toEqual(['data.cairn']);
});

const ADMIN = 'cairn_database-interrupted-admin-token-0123456789';

/** `cairn serve` on `data` (any free port), once it has announced itself in node.json. */
async function serve(data: string): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  children.push(child);
  while (!existsSync(join(data, 'node.json'))) {
    if (child.exitCode !== null) throw new Error('the node did not start');
    await sleep(50);
  }
}

const partials = (dest: string) =>
  existsSync(dest) ? readdirSync(dest).filter((f) => f.startsWith('.data.cairn.partial')) : [];

it('through a node, a backup killed mid-transfer does not block the next one into the same DEST', async () => {
  const data = join(root, 'data');
  await bigStore(data, 48);
  await serve(data);
  const dest = join(root, 'nightly');
  const args = ['database', 'backup', dest, '--data-dir', data];
  const { child, exited } = await launched(args, () => partials(dest).length > 0, { CAIRN_ADMIN_TOKEN: ADMIN });
  child.kill('SIGKILL');
  expect((await exited).signal).toBe('SIGKILL');
  const again = await cairn([...args, '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(again.code, again.stdout).toBe(0);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
});

it('through a node, a partial file whose pid now names another process (its start time differs) is removed, and the backup made', async () => {
  const data = join(root, 'data');
  await bigStore(data, 1);
  await serve(data);
  const dest = join(root, 'nightly');
  mkdirSync(dest);
  // A killed backup's, its pid reused by a process that runs (this test's) but started at another time.
  writeFileSync(join(dest, `.data.cairn.partial-${process.pid}-1`), 'half a copy');
  const r = await cairn(['database', 'backup', dest, '--data-dir', data, '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code, r.stdout).toBe(0);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
});

it('through a node, a partial file naming a running process and its start time is refused as another backup’s, and left', async () => {
  const data = join(root, 'data');
  await bigStore(data, 1);
  await serve(data);
  const dest = join(root, 'nightly');
  mkdirSync(dest);
  // This test's process, as a backup still writing would be.
  const live = `.data.cairn.partial-${process.pid}-${ownStartTime()}`;
  writeFileSync(join(dest, live), 'half a copy');
  const r = await cairn(['database', 'backup', dest, '--data-dir', data, '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code).toBe(1);
  const error = JSON.parse(r.stdout).error as { code: string; message: string };
  expect(error.code).toBe('VALIDATION_ERROR');
  expect(error.message).toContain(`another backup (pid ${process.pid}) is writing into ${dest}`);
  expect(readdirSync(dest)).toEqual([live]);
});

it('through a node, of two backups into one DEST the second is refused saying the first writes there, and the first succeeds', async () => {
  const data = join(root, 'data');
  await bigStore(data, 48);
  await serve(data);
  const dest = join(root, 'nightly');
  const args = ['database', 'backup', dest, '--data-dir', data, '--json'];
  const env = { CAIRN_ADMIN_TOKEN: ADMIN };
  const first = await launched(args, () => partials(dest).length > 0, env);
  // Held mid-run, so the second starts while the first is writing, however fast the machine.
  first.child.kill('SIGSTOP');
  const second = await cairn(args, env);
  first.child.kill('SIGCONT');
  expect(second.code).toBe(1);
  const error = JSON.parse(second.stdout).error as { code: string; message: string };
  expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'DEST' }] });
  expect(error.message).toContain(`another backup (pid ${first.child.pid}) is writing into ${dest}`);
  const done = await first.exited;
  expect(done.code, done.stderr()).toBe(0);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
  // The node's whole copy: it checks clean.
  const check = await cairn(['check', '--data-dir', dest, '--json']);
  expect(check.code, check.stdout).toBe(0);
});

it('an offline compact interrupted with Ctrl-C removes its half-built copy; the store still opens whole', async () => {
  const data = join(root, 'data');
  await bigStore(data, 48);
  const ended = await interrupted(
    ['database', 'compact', '--data-dir', data],
    () => existsSync(join(data, 'data.cairn.tmp')),
    'SIGINT',
  );
  expect(ended.signal).toBe('SIGINT');
  expect(existsSync(join(data, 'data.cairn.tmp'))).toBe(false);
  const check = await cairn(['database', 'check', '--data-dir', data]);
  expect(check.code, check.stderr).toBe(0);
  const store = await Store.open(data);
  try {
    expect((await store.range('t')).length).toBe(48 * 64);
  } finally {
    await store.close();
  }
});
