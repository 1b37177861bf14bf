import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { cairn, tempDir } from './helpers.js';

// `--json` means one JSON object on stdout whatever happens: every command that takes it says a
// failure as DESIGN.md §3's `{"error":{code,message,details}}`, with the exit code the text form has.

let root: string;
let cleanup: () => Promise<void>;
let data: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('cli-json'));
  data = join(root, 'data');
  const home = join(root, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CODEX_HOME: join(home, '.codex'), CAIRN_DATA_DIR: data };
  mkdirSync(home);
  expect((await cairn(['init'], env)).code).toBe(0);
  // Targets that are taken: a non-empty directory, a client config that already has a cairn entry.
  mkdirSync(join(root, 'full'));
  writeFileSync(join(root, 'full', 'x'), 'x');
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ mcpServers: { cairn: { command: 'x' } } }));
});
afterAll(async () => {
  await cleanup();
});

const none = () => join(root, 'none');

it.each<[string, () => string[], number, string, string]>([
  ['init, already initialised', () => ['init'], 1, 'VALIDATION_ERROR', 'already has tokens'],
  ['token create without --agent', () => ['token', 'create'], 2, 'VALIDATION_ERROR', '--agent'],
  [
    'token create --scope x:y',
    () => ['token', 'create', '--agent', 'a', '--scope', 'x:y'],
    2,
    'VALIDATION_ERROR',
    '--scope:',
  ],
  [
    'token create --user with a C1 control character',
    () => ['token', 'create', '--agent', 'a', '--user', 'a\u0085b'],
    2,
    'VALIDATION_ERROR',
    '--user: must not contain control characters',
  ],
  [
    'token create --user with a trailing blank',
    () => ['token', 'create', '--agent', 'a', '--user', 'alice '],
    2,
    'VALIDATION_ERROR',
    '--user: must not begin or end with whitespace',
  ],
  [
    'memories list --user with a trailing blank',
    () => ['memories', 'list', '--user', 'alice '],
    2,
    'VALIDATION_ERROR',
    '--user: must not begin or end with whitespace',
  ],
  [
    'export --scope with a leading blank',
    () => ['export', join(root, 'out-blank'), '--scope', ' work'],
    2,
    'VALIDATION_ERROR',
    '--scope: must not begin or end with whitespace',
  ],
  ['token revoke of no token', () => ['token', 'revoke', 'nope'], 1, 'NOT_FOUND', 'no token has id nope'],
  ['token, unknown subcommand', () => ['token', 'mint'], 2, 'VALIDATION_ERROR', 'unknown subcommand'],
  ['memories show of no note', () => ['memories', 'show', 'nope'], 1, 'NOT_FOUND', 'no note with key nope'],
  [
    'memories with two scopes',
    () => ['memories', 'list', '--scope', 'a', '--scope', 'b'],
    2,
    'VALIDATION_ERROR',
    '--scope',
  ],
  ['export into a non-empty dir', () => ['export', join(root, 'full')], 1, 'VALIDATION_ERROR', 'not empty'],
  ['import of nothing', () => ['import', none()], 1, 'NOT_FOUND', 'no such file or directory'],
  ['connect, entry exists', () => ['connect', 'claude'], 1, 'VALIDATION_ERROR', '--force'],
  ['connect, unknown client', () => ['connect', 'emacs'], 2, 'VALIDATION_ERROR', 'give one of'],
  ['check of no store', () => ['check', '--data-dir', none()], 1, 'NOT_FOUND', 'no store at'],
  ['database check of no store', () => ['database', 'check', '--data-dir', none()], 1, 'NOT_FOUND', 'no store'],
  ['database backup onto a store', () => ['database', 'backup', data], 1, 'VALIDATION_ERROR', 'already holds'],
  ['database restore over a store', () => ['database', 'restore', data], 1, 'VALIDATION_ERROR', 'already holds'],
  ['database compact of no store', () => ['database', 'compact', '--data-dir', none()], 1, 'NOT_FOUND', 'no store'],
  ['memories list of no store', () => ['memories', 'list', '--data-dir', none()], 1, 'NOT_FOUND', 'no store at'],
  ['export of no store', () => ['export', join(root, 'out'), '--data-dir', none()], 1, 'NOT_FOUND', 'no store at'],
  ['token list of no store', () => ['token', 'list', '--data-dir', none()], 1, 'NOT_FOUND', 'no store at'],
  ['token revoke of no store', () => ['token', 'revoke', 'x', '--data-dir', none()], 1, 'NOT_FOUND', 'no store at'],
  [
    'token create on no store',
    () => ['token', 'create', '--agent', 'a', '--data-dir', none()],
    1,
    'NOT_FOUND',
    'run `cairn init` (or `cairn serve`) first',
  ],
  ['token, no subcommand', () => ['token'], 2, 'VALIDATION_ERROR', 'missing subcommand; use create, list or revoke'],
  [
    'database, no subcommand',
    () => ['database'],
    2,
    'VALIDATION_ERROR',
    'missing subcommand; use check, backup DEST, restore SRC or compact',
  ],
  [
    'memories, no subcommand',
    () => ['memories'],
    2,
    'VALIDATION_ERROR',
    'missing subcommand; use list, show KEY, history KEY, forget KEY or audit --agent NAME',
  ],
  ['connect, no client', () => ['connect'], 2, 'VALIDATION_ERROR', 'missing client; use one of claude, codex'],
  // Found by a review: these said "give check, backup DEST, restore SRC or compact", as for a
  // subcommand the CLI does not know, and named no argument.
  ['database backup, no DEST', () => ['database', 'backup'], 2, 'VALIDATION_ERROR', 'missing DEST: the directory'],
  ['database restore, no SRC', () => ['database', 'restore'], 2, 'VALIDATION_ERROR', 'missing SRC: the backup'],
  ['memories show, no KEY', () => ['memories', 'show'], 2, 'VALIDATION_ERROR', 'missing KEY: the note'],
  ['memories forget, no KEY', () => ['memories', 'forget'], 2, 'VALIDATION_ERROR', 'missing KEY: the note'],
  ['token revoke, no ID', () => ['token', 'revoke'], 2, 'VALIDATION_ERROR', 'missing ID: the token'],
  ['an unknown command', () => ['frobnicate'], 2, 'VALIDATION_ERROR', 'unknown command'],
  ['an unknown option', () => ['token', 'list', '--frob'], 2, 'VALIDATION_ERROR', '--frob'],
])('%s: one §3 error object on stdout, the text form’s exit code', async (_label, args, exit, code, says) => {
  const text = await cairn(args(), env);
  expect(text.code, text.stderr).toBe(exit);
  expect(text.stderr).toContain(says);
  const r = await cairn([...args(), '--json'], env);
  expect(r.code).toBe(exit);
  expect(r.stderr).toBe('');
  const lines = r.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const body = JSON.parse(lines[0] as string) as { error: { code: string; message: string; details: unknown[] } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toContain(says);
  expect(Array.isArray(body.error.details)).toBe(true);
});

it('`cairn --json` with no command is bad usage in one JSON object, not the help text', async () => {
  const r = await cairn(['--json'], env);
  expect(r.code).toBe(2);
  expect(JSON.parse(r.stdout)).toEqual({
    error: { code: 'VALIDATION_ERROR', message: 'missing command (see cairn --help)', details: [] },
  });
  // Without --json it is the help, as before.
  const plain = await cairn([], env);
  expect(plain.code).toBe(2);
  expect(plain.stdout).toContain('Usage:');
});

it('a refusal on a data dir with no store creates none there', async () => {
  for (const args of [
    ['export', join(root, 'out')],
    ['token', 'list'],
    ['token', 'revoke', 'x'],
    ['token', 'create', '--agent', 'a'],
    ['memories', 'list'],
    ['check'],
  ]) {
    expect((await cairn([...args, '--data-dir', none()], env)).code, args.join(' ')).toBe(1);
    expect(existsSync(none()), args.join(' ')).toBe(false);
  }
});

it('a file where a directory is wanted is named as such, not an INTERNAL "File exists (os error 17)"', async () => {
  const file = join(root, 'a-file');
  writeFileSync(file, 'not a directory');
  const within = join(file, 'sub');
  for (const [args, code, field, says] of [
    [['init', '--data-dir', file], 2, '--data-dir', `${file} is a file, not a directory`],
    [['check', '--data-dir', within], 2, '--data-dir', `${within} has a file where a directory should be`],
    [['export', file], 1, 'DIR', `${file} is a file, not a directory`],
    [['export', within], 1, 'DIR', `${within} has a file where a directory should be`],
    [['database', 'backup', file], 1, 'DEST', `${file} is a file, not a directory`],
  ] as const) {
    const r = await cairn([...args, '--json'], env);
    expect(r.code, args.join(' ')).toBe(code);
    const { error } = JSON.parse(r.stdout) as {
      error: { code: string; details: { field: string; message: string }[] };
    };
    expect(error.code, args.join(' ')).toBe('VALIDATION_ERROR');
    expect(error.details, args.join(' ')).toEqual([{ field, message: says }]);
  }
  // `serve` says it before it tries to make the store, and does not start.
  const serve = await cairn(['serve', '--port', '0'], { ...env, CAIRN_DATA_DIR: file });
  expect(serve.code).toBe(2);
  expect(serve.stderr).toContain(`CAIRN_DATA_DIR: ${file} is a file, not a directory`);
});

it('a command group without its subcommand says what is missing, not "unknown command" and the help', async () => {
  for (const [group, then] of [
    ['token', 'create, list or revoke'],
    ['database', 'check, backup DEST'],
    ['memories', 'list, show KEY'],
    ['connect', 'claude, codex, cursor, claude-desktop, trae'],
    ['export', 'DIR'],
    ['import', 'PATH'],
  ] as const) {
    const r = await cairn([group], env);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(`cairn ${group}: missing `), r.stderr).toBe(true);
    expect(r.stderr).toContain(then);
    expect(r.stderr).not.toContain('unknown command');
    expect(r.stderr).not.toContain('Usage:');
  }
});

it('an option error names the option the user typed, not the field behind it', async () => {
  const r = await cairn(['token', 'create', '--agent', 'a', '--scope', 'x:y', '--json'], env);
  const { error } = JSON.parse(r.stdout) as { error: { message: string; details: { field: string }[] } };
  expect(error.message).not.toContain('--scopes');
  expect(error.details[0]?.field).toBe('--scope');
  const text = await cairn(['token', 'create', '--agent', 'a', '--scope', 'x:y'], env);
  expect(text.stderr).not.toContain('--scopes');
  const task = await cairn(['memories', 'show', 'k', '--task', ''], env);
  expect(task.code).toBe(2);
  expect(task.stderr).toContain('--task');
});
