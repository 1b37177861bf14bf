import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// What killed runs leave in a data dir (a node's backup staging dir, a restore's staging dirs)
// holds whole copies of a store. `compact --purge` promises forgotten data is gone from the disk,
// so whatever opens the store for writing removes them: found by the operator's lifecycle probe,
// where an offline purge left a killed node's 16 MB backup copy, and `init` on a killed restore's
// target kept the source's copy beside the new store for good.

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const caller = { tenant: 'local', user: 'default', scope: 'gone', agent: 'test' };
const WORD = 'Zanzibarquokka';

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('leftovers'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

/** Every file under `dir`, subdirectories included, whose bytes hold `word` in any case. */
function filesHolding(dir: string, word: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...filesHolding(path, word));
    else if (readFileSync(path).toString('latin1').toLowerCase().includes(word.toLowerCase())) found.push(path);
  }
  return found;
}

/** This process's start time as Linux counts it (field 22 of /proc/self/stat): half of a live run's mark. */
function ownStartTime(): string {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] as string;
}

/** A directory `name` in `dir` holding a copy of a store's data file that names WORD, as a killed run leaves it. */
function leftover(dir: string, name: string, file: string): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, file), `page bytes ... ${WORD} was seen at the harbour ...`);
}

// A dead restore's mark: this test's pid, which runs, but started at another time (pids are reused).
const deadRestore = `.restore-${process.pid}-1-0badc0de`;

it('an offline compact --purge removes a killed node’s backup copy, node.json and a killed restore’s copy: the word is gone from disk', async () => {
  const data = join(root, 'data');
  const store = await Store.open(data);
  await store.knowledge('remember', caller, { content: `${WORD} was seen at the harbour.` });
  await store.knowledge('remember', { ...caller, scope: 'keep' }, { content: 'Mira Lund works at Northwind Labs.' });
  expect((await store.knowledge('forget', caller, { all: true })).state).toBe('forgotten');
  await store.close();
  leftover(data, '.backup-0123456789ab', 'data.cairn.backup');
  leftover(data, deadRestore, 'data.cairn');
  leftover(data, `${deadRestore}-source`, 'wal.cairn');
  // A killed node's announcement: the CLI ignores it (no process holds the lock), and now removes it.
  writeFileSync(
    join(data, 'node.json'),
    JSON.stringify({ url: 'http://127.0.0.1:9', pid: 2 ** 22 + 7, dataDir: data }),
  );
  // A restore still running (this process, its start time and all) is not a dead run's: it stays.
  const live = `.restore-${process.pid}-${ownStartTime()}-0000beef`;
  mkdirSync(join(data, live));

  const r = await cairn(['database', 'compact', '--purge', '--data-dir', data, '--json']);
  expect(r.code, r.stdout).toBe(0);
  expect(filesHolding(data, WORD)).toEqual([]);
  expect(readdirSync(data).sort()).toEqual([live, 'LOCK', 'data.cairn', 'wal.cairn'].sort());
  expect((await cairn(['check', '--data-dir', data])).code).toBe(0);
});

it('init on the target of a killed restore removes the restore’s staging dirs; a node started there too', async () => {
  const target = join(root, 'target');
  leftover(target, deadRestore, 'data.cairn');
  leftover(target, `${deadRestore}-source`, 'data.cairn');
  const init = await cairn(['init', '--data-dir', target, '--json']);
  expect(init.code, init.stdout).toBe(0);
  expect(readdirSync(target).filter((n) => n.startsWith('.'))).toEqual([]);
  expect(filesHolding(target, WORD)).toEqual([]);

  // A node that starts on a store a killed restore's dirs sit beside removes them as it opens it.
  leftover(target, deadRestore, 'data.cairn');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', target, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(target, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  expect(existsSync(join(target, 'node.json'))).toBe(true);
  expect(existsSync(join(target, deadRestore))).toBe(false);
});
