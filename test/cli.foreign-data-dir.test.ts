import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { cairn, tempDir } from './helpers.js';

// A store is made only in an empty or new directory: `--data-dir ~/projects/app` by mistake must
// not put one among the user's files. A store already there, or what a store leaves, is fine.

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('foreign-dir'));
});
afterEach(async () => {
  await cleanup();
});

/** A project directory: files a user keeps, none of them Cairn's. */
function project(): string {
  const app = join(dir, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  mkdirSync(join(app, '.git'));
  for (const name of ['README.md', 'package.json', 'tsconfig.json', 'LICENSE']) writeFileSync(join(app, name), 'x');
  return app;
}

interface Refusal {
  error: { code: string; message: string; details: { field: string; message: string }[] };
}

it.each([
  ['init', (app: string) => ['init', '--data-dir', app, '--json']],
  ['serve', (app: string) => ['serve', '--data-dir', app, '--port', '0']],
  ['import', (app: string) => ['import', join(dir, 'export.jsonl'), '--data-dir', app, '--scope', 'p', '--json']],
])('%s refuses to make a store in a directory holding other files, naming it and what it holds', async (_, args) => {
  const app = project();
  writeFileSync(join(dir, 'export.jsonl'), `${JSON.stringify({ kind: 'entity', id: '1', name: 'Globex' })}\n`);
  const before = readdirSync(app).sort();
  const r = await cairn(args(app));
  expect(r.code, r.stderr).toBe(2);
  const said = r.stdout === '' ? r.stderr : (JSON.parse(r.stdout) as Refusal).error.message;
  // Names first, dotfiles last, a few of them: enough to recognise the directory.
  expect(said).toContain(
    `${app} holds no Cairn store and is not empty (LICENSE, README.md, package.json, src, and 2 more)`,
  );
  expect(said).toContain('give an empty or new directory');
  expect(readdirSync(app).sort()).toEqual(before);
});

it('init --json gives the refusal as a structured error naming --data-dir', async () => {
  const app = project();
  const r = await cairn(['init', '--data-dir', app, '--json']);
  expect(r.code).toBe(2);
  const body = JSON.parse(r.stdout) as Refusal;
  expect(body.error.code).toBe('VALIDATION_ERROR');
  expect(body.error.details).toEqual([{ field: '--data-dir', message: 'not empty' }]);
});

it('a directory holding only what a store or the system leaves (its log, staging dirs, lost+found, .DS_Store) takes a store', async () => {
  const data = join(dir, 'data');
  mkdirSync(join(data, 'lost+found'), { recursive: true });
  mkdirSync(join(data, '.backup-0123456789ab'));
  writeFileSync(join(data, 'node.log'), 'an earlier start\n');
  writeFileSync(join(data, '.DS_Store'), 'Finder was here');
  const r = await cairn(['init', '--data-dir', data, '--json']);
  expect(r.code, r.stdout).toBe(0);
});

it('a store already kept beside other files still opens', async () => {
  const data = join(dir, 'data');
  expect((await cairn(['init', '--data-dir', data])).code).toBe(0);
  writeFileSync(join(data, 'NOTES.txt'), 'the operator keeps this here');
  const r = await cairn(['token', 'list', '--data-dir', data]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('admin');
});

it('a Memory Package given as the data dir is named as one', async () => {
  const data = join(dir, 'data');
  expect((await cairn(['init', '--data-dir', data])).code).toBe(0);
  const pkg = join(dir, 'pkg');
  expect((await cairn(['export', pkg, '--data-dir', data, '--allow-empty'])).code).toBe(0);
  const r = await cairn(['import', pkg, '--data-dir', pkg]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`${pkg} holds a Memory Package (manifest.json, records.jsonl), not a store`);
});
