import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn memories list|show|history|forget`: the notes of a scope as an operator reads them, on
// the store directly and through a running node.

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const ADMIN = 'cairn_memories-test-admin-token-0123456789abcdef';
const who = ['--user', 'ann', '--scope', 'work'];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-mem'));
  const store = await Store.open(dir);
  const caller = { tenant: 'local', user: 'ann', scope: 'work', agent: 'claude' };
  for (const body of [
    { key: 'editor.theme', value: { theme: 'dark' }, kind: 'user_preference' },
    { key: 'editor.theme', value: { theme: 'light' }, kind: 'user_preference' },
    { key: 'release.plan', value: { freeze: 'friday' }, kind: 'task_state', visibility: 'task', taskId: 'REL-1' },
    { key: 'scratch', value: { mine: true }, kind: 'user_fact', visibility: 'agent' },
  ]) {
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

it('lists, shows, pages the history of and forgets a note on the store', async () => {
  const list = await mem(['list', '--json']);
  expect(list.code, list.stderr).toBe(0);
  // Every note of the scope, whatever its visibility, task or agent.
  const keys = (JSON.parse(list.stdout) as { notes: { key: string }[] }).notes.map((n) => n.key);
  expect(keys.sort()).toEqual(['editor.theme', 'release.plan', 'scratch']);
  const text = await mem(['list']);
  expect(text.stdout).toMatch(/^editor\.theme {2}v2 {2}user_preference {2}user {2}claude .*"theme":"light"/m);
  const task = await mem(['list', '--visibility', 'task', '--task', 'REL-1', '--json']);
  expect((JSON.parse(task.stdout) as { notes: { key: string }[] }).notes.map((n) => n.key)).toEqual(['release.plan']);

  const show = await mem(['show', 'editor.theme', '--json']);
  expect((JSON.parse(show.stdout) as { notes: { value: unknown }[] }).notes[0]?.value).toEqual({ theme: 'light' });
  const history = await mem(['history', 'editor.theme', '--json']);
  const events = (JSON.parse(history.stdout) as { events: { op: string; agent: string }[] }).events;
  expect(events.map((e) => [e.op, e.agent])).toEqual([
    ['create', 'claude'],
    ['replace', 'claude'],
  ]);

  expect((await mem(['forget', 'editor.theme'])).code).toBe(0);
  const gone = await mem(['show', 'editor.theme']);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toContain('no note with key editor.theme');
  expect((await mem(['list', '--kind', 'bogus'])).code).toBe(2);
});

it('goes through a running node with the admin token', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const env = { CAIRN_ADMIN_TOKEN: ADMIN };
  const all = await mem(['list', '--json'], env);
  const listed = (JSON.parse(all.stdout) as { notes: { key: string }[] }).notes.map((n) => n.key);
  expect(listed.sort()).toEqual(['editor.theme', 'release.plan', 'scratch']);
  const show = await mem(['show', 'editor.theme', '--json'], env);
  expect(show.code, show.stderr).toBe(0);
  expect((JSON.parse(show.stdout) as { notes: { value: unknown }[] }).notes[0]?.value).toEqual({ theme: 'light' });
  expect((await mem(['forget', 'editor.theme'], env)).code).toBe(0);
  expect((await mem(['show', 'editor.theme'], env)).code).toBe(1);
  expect((await mem(['list', '--agent', 'x'], env)).code).toBe(2);
});
