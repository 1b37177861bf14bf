import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn memories history KEY --newest` and `cairn memories audit --agent NAME --newest`: the
// latest change first, as the verbs' `newestFirst` reads it, on the store and through a running
// node. Before, the CLI had no such option (`--newest is not an option`), and a note changed 25
// times printed its latest change last, after two pages of older ones.

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const ADMIN = 'cairn_memories-newest-admin-token-0123456789ab';
const who = ['--user', 'ann', '--scope', 'work'];
/** More versions than one page of history holds (20), so the newest-first order runs across pages. */
const VERSIONS = 25;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-newest'));
  const store = await Store.open(dir);
  const caller = { tenant: 'local', user: 'ann', scope: 'work', agent: 'claude' };
  for (let v = 1; v <= VERSIONS; v++) {
    const body = { key: 'deploy.window', value: { step: v }, kind: 'task_state' };
    expect((await store.notes('note_write', caller, body)).error).toBeUndefined();
  }
  await store.close();
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const mem = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  cairn(['memories', ...args, ...who, '--data-dir', dir], env);

type Event = { seq: string; after: { value?: { step?: number } } | null };

/** The `step` each event of a `--json` history or audit wrote, in the order printed. */
async function steps(args: string[], env: NodeJS.ProcessEnv = {}): Promise<(number | undefined)[]> {
  const r = await mem([...args, '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { events: Event[] }).events.map((e) => e.after?.value?.step);
}

const oldestFirst = Array.from({ length: VERSIONS }, (_, i) => i + 1);
const newestFirst = [...oldestFirst].reverse();

/** Checks both commands, with and without --newest, in JSON and in text. */
async function checkOrders(env: NodeJS.ProcessEnv): Promise<void> {
  expect(await steps(['history', 'deploy.window'], env)).toEqual(oldestFirst);
  expect(await steps(['history', 'deploy.window', '--newest'], env)).toEqual(newestFirst);
  expect(await steps(['audit', '--agent', 'claude'], env)).toEqual(oldestFirst);
  expect(await steps(['audit', '--agent', 'claude', '--newest'], env)).toEqual(newestFirst);
  // In text, the first block is the latest change.
  const text = await mem(['history', 'deploy.window', '--newest'], env);
  expect(text.code, text.stderr).toBe(0);
  expect(text.stdout.split('\n')[0]).toMatch(new RegExp(`\\bv${VERSIONS}\\b`));
  const audit = await mem(['audit', '--agent', 'claude', '--newest'], env);
  expect(audit.stdout.split('\n')[0]).toContain(`"step":${VERSIONS}`);
}

it('prints the latest change first with --newest, on the store', async () => {
  await checkOrders({});
});

it('prints the latest change first with --newest, through a running node with the admin token', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  expect(JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8'))).toHaveProperty('url');
  await checkOrders({ CAIRN_ADMIN_TOKEN: ADMIN });
});

it('takes --newest only where it means something, and names it in --help', async () => {
  const foreign = await mem(['show', 'deploy.window', '--newest']);
  expect([foreign.code, foreign.stderr]).toEqual([2, expect.stringContaining('--newest is not an option')]);
  const help = await cairn(['memories', '--help']);
  expect(help.stdout).toContain('cairn memories history KEY [--newest]');
  expect(help.stdout).toContain('cairn memories audit --agent NAME [--newest]');
});
