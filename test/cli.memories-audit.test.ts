import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn memories audit --agent NAME`: one agent's write events in a scope (the `audit` verb), on
// the store directly and through a running node (issue 4, item 4).

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const ADMIN = 'cairn_memories-audit-admin-token-0123456789abc';
const who = ['--user', 'ann', '--scope', 'work'];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-audit'));
  const store = await Store.open(dir);
  const claude = { tenant: 'local', user: 'ann', scope: 'work', agent: 'claude' };
  const codex = { ...claude, agent: 'codex' };
  const write = async (caller: typeof claude, body: object) =>
    expect((await store.notes('note_write', caller, { allowPrivate: true, ...body })).error).toBeUndefined();
  await write(claude, { key: 'editor.theme', value: { theme: 'dark' }, kind: 'user_preference' });
  await write(claude, { key: 'editor.theme', value: { theme: 'light' }, kind: 'user_preference' });
  await write(claude, { key: 'diary', value: { mood: 'quietly-private' }, kind: 'user_fact', private: true });
  const stored = await store.knowledge('remember', claude, {
    content: 'Ada Quist ships the packer.',
    facts: { relations: [{ source: 'Ada Quist', target: 'Packer', type: 'ships' }] },
  });
  expect(stored.error).toBeUndefined();
  await write(codex, { key: 'codex.plan', value: { step: 2 }, kind: 'decision' });
  await store.close();
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const audit = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  cairn(['memories', 'audit', ...args, ...who, '--data-dir', dir], env);

type Event = { family: string; op: string; agent: string; target: Record<string, unknown>; redacted?: string };

/** Starts `cairn serve` on the test's data dir and waits for its node file. */
async function serve(): Promise<void> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  expect(JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8'))).toHaveProperty('url');
}

it('lists one agent’s events in the scope, oldest first, on the store', async () => {
  const r = await audit(['--agent', 'claude', '--json']);
  expect(r.code, r.stderr).toBe(0);
  const events = (JSON.parse(r.stdout) as { events: Event[] }).events;
  expect(events.every((e) => e.agent === 'claude')).toBe(true);
  expect(events.filter((e) => e.family === 'note').map((e) => [e.op, e.target.key])).toEqual([
    ['create', 'editor.theme'],
    ['replace', 'editor.theme'],
    ['create', 'diary'],
  ]);
  expect(events.some((e) => e.family === 'entity' && e.target.name === 'Ada Quist')).toBe(true);
  // The operator owns the store: a private note's event is read whole.
  expect(r.stdout).toContain('quietly-private');

  const text = await audit(['--agent', 'claude']);
  expect(text.code, text.stderr).toBe(0);
  const lines = text.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^\d+ {2}\S+Z {2}note create {2}editor\.theme {2}\{.*"dark"/);
  expect(lines.some((l) => /fact assert {2}Ada Quist -\[ships\]-> Packer/.test(l))).toBe(true);

  const codex = await audit(['--agent', 'codex', '--json']);
  const theirs = (JSON.parse(codex.stdout) as { events: Event[] }).events;
  expect(theirs.map((e) => [e.agent, e.target.key])).toEqual([['codex', 'codex.plan']]);
  const nobody = await audit(['--agent', 'gemini']);
  expect([nobody.code, nobody.stdout]).toEqual([0, 'no events of agent gemini here\n']);
});

it('goes through a running node with the admin token, and refuses any other token', async () => {
  const onStore = JSON.parse((await audit(['--agent', 'claude', '--json'])).stdout) as { events: Event[] };
  await serve();
  const r = await audit(['--agent', 'claude', '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code, r.stderr).toBe(0);
  const events = (JSON.parse(r.stdout) as { events: Event[] }).events;
  expect(events.map((e) => [e.family, e.op])).toEqual(onStore.events.map((e) => [e.family, e.op]));
  // A node without CAIRN_ALLOW_PRIVATE shows a private note's event redacted.
  expect(events.find((e) => e.target.key === 'diary')?.redacted).toBe('private');
  expect(r.stdout).not.toContain('quietly-private');

  const made = await cairn(['token', 'create', '--agent', 'codex', '--user', 'ann', '--data-dir', dir, '--json'], {
    CAIRN_ADMIN_TOKEN: ADMIN,
  });
  const agentToken = (JSON.parse(made.stdout) as { token: string }).token;
  const refused = await audit(['--agent', 'claude'], { CAIRN_ADMIN_TOKEN: agentToken });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('FORBIDDEN');
});

it('needs --agent, a valid agent name and only its own options; --help names it', async () => {
  const none = await audit(['--json']);
  expect(none.code).toBe(2);
  expect(JSON.parse(none.stdout)).toMatchObject({
    error: { code: 'VALIDATION_ERROR', details: [{ field: '--agent' }] },
  });
  const bad = await audit(['--agent', 'not a name']);
  expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--agent')]);
  const foreign = await audit(['--agent', 'claude', '--kind', 'decision']);
  expect([foreign.code, foreign.stderr]).toEqual([2, expect.stringContaining('--kind is not an option')]);
  const help = await cairn(['memories', '--help']);
  expect(help.stdout).toContain('cairn memories audit --agent NAME');
});
