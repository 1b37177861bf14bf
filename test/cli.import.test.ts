import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';

// `cairn import FILE`: an export file into an empty scope (bulk load), into one holding knowledge
// (matched by import, nothing duplicated), with bad lines named by line, and through a running
// node's admin API with the admin token.

const ADMIN = 'cairn_import-test-admin-0123456789abcdefghijklmnop';
let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-import'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const AT = '2026-01-01T00:00:00.000Z';
const RECORDS = [
  { kind: 'entity', id: '1', name: 'Priya Raman', types: ['person'] },
  { kind: 'entity', id: '2', name: 'Globex', types: ['company'] },
  { kind: 'entity', id: '3', name: 'Berlin', types: ['city'] },
  {
    kind: 'fact',
    id: '10',
    from: '1',
    to: '2',
    from_name: 'Priya Raman',
    to_name: 'Globex',
    type: 'works_at',
    recorded_at: AT,
  },
  {
    kind: 'fact',
    id: '11',
    from: '2',
    to: '3',
    from_name: 'Globex',
    to_name: 'Berlin',
    type: 'located_in',
    recorded_at: AT,
  },
];

function exportFile(lines: string[]): string {
  const file = join(dir, 'export.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

interface Imported {
  mode: string;
  imported: Record<string, number>;
  unchanged: Record<string, number>;
  skipped: { index: number; reason: string }[];
}

it('loads a file into an empty scope, then matches it record by record when run again', async () => {
  const file = exportFile(RECORDS.map((r) => JSON.stringify(r)));
  const store = join(dir, 'store');
  const first = await cairn(['import', file, '--data-dir', store, '--scope', 'proj', '--json']);
  expect(first.code, first.stderr).toBe(0);
  const a = JSON.parse(first.stdout) as Imported;
  expect(a.mode).toBe('load');
  expect(a.imported).toEqual({ entities: 3, facts: 2, documents: 0, notes: 0, handoffs: 0 });
  expect(a.skipped).toEqual([]);
  const again = await cairn(['import', file, '--data-dir', store, '--scope', 'proj', '--json']);
  expect(again.code, again.stderr).toBe(0);
  const b = JSON.parse(again.stdout) as Imported;
  expect(b.mode).toBe('import');
  expect(b.imported).toEqual({ entities: 0, facts: 0, documents: 0, notes: 0, handoffs: 0 });
  expect(b.unchanged).toEqual({ entities: 3, facts: 2, documents: 0, notes: 0, handoffs: 0 });
  expect((await cairn(['check', '--data-dir', store])).code).toBe(0);
});

it('takes note and handoff records, by load into an empty scope and by import again', async () => {
  const extra = [
    { kind: 'note', id: '20', key: 'editor', value: 'helix', noteKind: 'user_preference', version: 3, agent: 'x' },
    { kind: 'handoff', id: '21', taskId: 'release', summary: 'docs left', from: 'x', createdAt: AT },
  ];
  const file = exportFile([...RECORDS, ...extra].map((r) => JSON.stringify(r)));
  const store = join(dir, 'store');
  const first = await cairn(['import', file, '--data-dir', store, '--json']);
  expect(first.code, first.stderr).toBe(0);
  const a = JSON.parse(first.stdout) as Imported;
  expect(a.mode).toBe('load');
  expect(a.imported).toEqual({ entities: 3, facts: 2, documents: 0, notes: 1, handoffs: 1 });
  const again = await cairn(['import', file, '--data-dir', store]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain('unchanged: 3 entities, 2 facts, 0 documents, 1 note, 1 handoff');
});

it('names bad lines by line, exits 1, and refuses bad usage with 2', async () => {
  const lines = RECORDS.map((r) => JSON.stringify(r));
  lines.splice(1, 0, '{"kind": "entity", "name": ');
  const file = exportFile(lines);
  const store = join(dir, 'store');
  for (const scope of ['empty', 'again']) {
    // The first run loads (empty scope); the second matches (the scope then holds knowledge).
    const r = await cairn(['import', file, '--data-dir', store, '--scope', 'bad', '--json']);
    expect(r.code, `${scope}: ${r.stderr}`).toBe(1);
    const out = JSON.parse(r.stdout) as Imported;
    expect(out.skipped.map((s) => s.index)).toEqual([1]);
    expect(out.skipped[0]?.reason).toMatch(/^record: not JSON/);
  }
  const human = await cairn(['import', file, '--data-dir', store, '--scope', 'bad']);
  expect(human.stdout).toContain('line 2: record: not JSON');
  // A path that is not there is not found (1), as a missing store is; bad usage is 2.
  expect((await cairn(['import', join(dir, 'missing.jsonl'), '--data-dir', store])).code).toBe(1);
  expect((await cairn(['import', file, '--data-dir', store, '--scope', 'a:b'])).code).toBe(2);
});

it('a last line the file ends inside is skipped as cut short, on the first run and on a re-run', async () => {
  const whole = `${RECORDS.map((r) => JSON.stringify(r)).join('\n')}\n`;
  const file = join(dir, 'cut.jsonl');
  writeFileSync(file, `${whole}{"kind":"entity","id":"9","name":"Ber`);
  const store = join(dir, 'store');
  for (const run of ['load', 'import']) {
    const r = await cairn(['import', file, '--data-dir', store, '--scope', 'cut', '--json']);
    expect(r.code, `${run}: ${r.stderr}`).toBe(1);
    const out = JSON.parse(r.stdout) as Imported;
    expect(out.mode).toBe(run);
    expect(out.skipped.map((s) => s.index)).toEqual([RECORDS.length]);
    expect(out.skipped[0]?.reason).toContain('the file ends inside this line (no newline after it): cut short?');
  }
  // A bad line with a newline after it is not called cut short.
  writeFileSync(file, `${whole}{"kind":"entity","id":"9","name":"Ber\n`);
  const bad = JSON.parse(
    (await cairn(['import', file, '--data-dir', store, '--scope', 'cut', '--json'])).stdout,
  ) as Imported;
  expect(bad.skipped[0]?.reason).not.toContain('cut short');
});

// Found by an audit: an empty file was "loaded into an empty scope", exit 0.
it('refuses a file holding no record as bad input (exit 1), naming it, before any store is made', async () => {
  const store = join(dir, 'store');
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '');
  const r = await cairn(['import', empty, '--data-dir', store]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${empty} is empty (0 bytes): nothing to import`);
  const json = await cairn(['import', empty, '--data-dir', store, '--json']);
  expect(json.code).toBe(1);
  expect(JSON.parse(json.stdout)).toMatchObject({
    error: { code: 'VALIDATION_ERROR', details: [{ field: 'PATH', message: 'no records' }] },
  });
  const blank = join(dir, 'blank.jsonl');
  writeFileSync(blank, '\n  \n\n');
  const b = await cairn(['import', blank, '--data-dir', store]);
  expect(b.code).toBe(1);
  expect(b.stderr).toContain(`${blank} holds only blank lines`);
  expect(existsSync(store)).toBe(false);
});

// A mistyped size was taken for the default (a sixteenth of memory in one load), without a word.
it('refuses a CAIRN_LOAD_PIECE_BYTES that is no whole number of bytes (exit 2), before any store is made', async () => {
  const store = join(dir, 'store');
  const file = exportFile(RECORDS.map((r) => JSON.stringify(r)));
  for (const bad of ['64MB', '0', '1.5', '']) {
    const r = await cairn(['import', file, '--data-dir', store, '--json'], { CAIRN_LOAD_PIECE_BYTES: bad });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: { code: 'VALIDATION_ERROR', details: [{ field: 'CAIRN_LOAD_PIECE_BYTES' }] },
    });
  }
  expect(existsSync(store)).toBe(false);
  expect((await cairn(['import', file, '--data-dir', store], { CAIRN_LOAD_PIECE_BYTES: '65536' })).code).toBe(0);
});

// Found by an audit: `[]`, `{}` and a saved memory_export reply were "loaded", zero counts.
it('refuses a file whose first record line is no record, naming the line, before any store is made', async () => {
  const store = join(dir, 'store');
  const cases: [string, string][] = [
    ['[]', 'line 1 is a JSON array'],
    ['\n\n{}\n', 'line 3 is a JSON object without a `kind`'],
    [JSON.stringify({ records: RECORDS, next: null }), 'line 1 is a memory_export reply'],
    ['<html>502 Bad Gateway</html>', 'line 1 is not JSON'],
  ];
  for (const [text, problem] of cases) {
    const file = join(dir, 'not-export.jsonl');
    writeFileSync(file, text);
    const r = await cairn(['import', file, '--data-dir', store, '--json']);
    expect(r.code, text).toBe(1);
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string; details: unknown[] } };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toContain(`${file} is not an export file: ${problem}`);
    expect(error.details).toEqual([{ field: 'PATH', message: expect.stringContaining(problem) }]);
  }
  expect(existsSync(store)).toBe(false);
});

it("a package's manifest.json given as PATH is named as such, with its directory to import (new-user audit)", async () => {
  const source = join(dir, 'source');
  expect((await cairn(['init', '--data-dir', source])).code).toBe(0);
  const pkg = join(dir, 'pkg');
  expect((await cairn(['export', pkg, '--allow-empty', '--data-dir', source])).code).toBe(0);
  const store = join(dir, 'store');
  const manifest = join(pkg, 'manifest.json');
  const r = await cairn(['import', manifest, '--data-dir', store, '--json']);
  expect(r.code).toBe(1);
  // Before: "… is not an export file: line 1 is not JSON" (the manifest is pretty-printed).
  expect(JSON.parse(r.stdout)).toEqual({
    error: {
      code: 'VALIDATION_ERROR',
      message: `${manifest} is a Memory Package's manifest: import the package by its directory (cairn import ${pkg})`,
      details: [{ field: 'PATH', message: 'a manifest' }],
    },
  });
  expect(existsSync(store)).toBe(false);
});

it('imports an export of an empty scope (its header alone), and blank pieces before the first record', async () => {
  const store = join(dir, 'store');
  expect((await cairn(['init', '--data-dir', store, '--json'])).code).toBe(0);
  const pkg = join(dir, 'pkg');
  expect((await cairn(['export', pkg, '--data-dir', store, '--scope', 'none', '--allow-empty'])).code).toBe(0);
  const header = readFileSync(join(pkg, 'records.jsonl'), 'utf8');
  expect(JSON.parse(header)).toMatchObject({ kind: 'header' });
  const only = exportFile([header.trimEnd()]);
  const r = await cairn(['import', only, '--data-dir', store, '--scope', 'copy', '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ mode: 'load', imported: { entities: 0 }, skipped: [] });
  // 2,000 blank lines (pieces of 300 bytes hold only them), then records with a bad line among them:
  // the first piece with a record is loaded, and lines are still numbered from the file's start.
  const lines = [...Array.from({ length: 2000 }, () => ''), ...RECORDS.map((x) => JSON.stringify(x)), '{"kind": '];
  const file = exportFile(lines);
  const p = await cairn(['import', file, '--data-dir', store, '--scope', 'late', '--json'], {
    CAIRN_LOAD_PIECE_BYTES: '300',
  });
  expect(p.code, p.stderr).toBe(1);
  const out = JSON.parse(p.stdout) as Imported;
  expect(out.imported).toMatchObject({ entities: 3, facts: 2 });
  expect(out.skipped.map((x) => x.index)).toEqual([2005]);
});

/** `n` entities, each related to the next, as export lines. */
function chain(n: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++)
    lines.push(JSON.stringify({ kind: 'entity', id: String(i), name: `Node ${i}`, types: ['x'] }));
  for (let i = 0; i + 1 < n; i++) {
    const fact = { kind: 'fact', id: String(n + i), from: String(i), to: String(i + 1), type: 'next', recorded_at: AT };
    lines.push(JSON.stringify({ ...fact, from_name: `Node ${i}`, to_name: `Node ${i + 1}` }));
  }
  return lines;
}

/** What `cairn export` wrote of a scope, without ids: entities by name and types, facts by ends and type. */
async function exported(store: string, scope: string): Promise<string[]> {
  const pkg = join(dir, `pkg-${scope}`);
  const r = await cairn(['export', pkg, '--data-dir', store, '--scope', scope]);
  expect(r.code, r.stderr).toBe(0);
  const records = readFileSync(join(pkg, 'records.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  return records
    .map((r: Record<string, unknown>) =>
      r.kind === 'entity'
        ? `entity ${String(r.name)} ${JSON.stringify(r.types)}`
        : r.kind === 'fact'
          ? `fact ${String(r.from_name)} ${String(r.type)} ${String(r.to_name)} ${String(r.ended_at ?? '')}`
          : String(r.kind),
    )
    .sort();
}

it('reads a file a piece at a time: the first piece loaded, the rest imported, lines numbered across pieces', async () => {
  const lines = chain(60);
  lines.splice(100, 0, '{"kind": "fact", "id": ');
  const file = exportFile(lines);
  const store = join(dir, 'store');
  const whole = await cairn(['import', file, '--data-dir', store, '--scope', 'whole', '--json']);
  const pieces = await cairn(['import', file, '--data-dir', store, '--scope', 'pieces', '--json'], {
    CAIRN_LOAD_PIECE_BYTES: '1000',
  });
  expect([whole.code, pieces.code], pieces.stderr).toEqual([1, 1]);
  const [a, b] = [JSON.parse(whole.stdout) as Imported, JSON.parse(pieces.stdout) as Imported];
  expect([a.mode, b.mode]).toEqual(['load', 'load_then_import']);
  expect(b.imported).toEqual({ entities: 60, facts: 59, documents: 0, notes: 0, handoffs: 0 });
  expect(b.imported).toEqual(a.imported);
  expect(b.skipped.map((s) => s.index)).toEqual([100]);
  expect(await exported(store, 'pieces')).toEqual(await exported(store, 'whole'));
  expect((await cairn(['check', '--data-dir', store])).code).toBe(0);
});

it('goes through the running node with the admin token', async () => {
  const file = exportFile(RECORDS.map((r) => JSON.stringify(r)));
  // Its own directory: a node makes no store beside the export file.
  const store = join(dir, 'store');
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', store, '--port', '0'], {
    // Pieces of 300 bytes: the node loads the file's first lines and imports the rest as they arrive.
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN, CAIRN_LOAD_PIECE_BYTES: '300' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let url = '';
  for (let i = 0; i < 100 && url === ''; i++) {
    if (existsSync(join(store, 'node.json'))) {
      url = (JSON.parse(readFileSync(join(store, 'node.json'), 'utf8')) as { url: string }).url;
    } else {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  expect(url).not.toBe('');
  const noToken = await cairn(['import', file, '--data-dir', store], { CAIRN_ADMIN_TOKEN: '' });
  expect(noToken.code).toBe(1);
  expect(noToken.stderr).toContain('CAIRN_ADMIN_TOKEN');
  const r = await cairn(['import', file, '--data-dir', store, '--user', 'ann', '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code, r.stderr).toBe(0);
  expect((JSON.parse(r.stdout) as Imported).mode).toBe('load_then_import');
  expect((JSON.parse(r.stdout) as Imported).imported).toEqual({
    entities: 3,
    facts: 2,
    documents: 0,
    notes: 0,
    handoffs: 0,
  });
  // The records are ann's, in scope `default`: recall finds them through the memory API.
  const recall = await fetch(`${url}/v1/memory/recall`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: 'ann', subject: 'Priya Raman' }),
  });
  const reply = (await recall.json()) as { state: string; facts: { relation: string }[] };
  expect(reply.state).toBe('answered');
  expect(reply.facts.map((f) => f.relation)).toContain('works_at');
  // A request without a token is refused, and a body sent as another type is 415 before it is read.
  for (const body of ['{}', readFileSync(file)]) {
    const plain = await fetch(`${url}/v1/admin/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body,
    });
    expect(plain.status).toBe(415);
  }
  const denied = await fetch(`${url}/v1/admin/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson' },
    body: readFileSync(file),
  });
  expect(denied.status).toBe(401);
  // The body is read as it arrives, so its length must come first: without one (chunked) it is
  // refused, and over the limit it is 413, in both cases with nothing of it stored.
  const chunked = await fetch(`${url}/v1/admin/import?user=bob`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/x-ndjson' },
    body: Readable.toWeb(Readable.from([readFileSync(file)])) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  expect(chunked.status).toBe(422);
  expect(((await chunked.json()) as { error: { details: unknown[] } }).error.details).toEqual([
    { field: 'content-length', message: 'required' },
  ]);
  const huge = await new Promise<number>((resolve, reject) => {
    const req = request(`${url}/v1/admin/import?user=bob`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN}`,
        'content-type': 'application/x-ndjson',
        'content-length': String(2 ** 40),
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', reject);
    req.write(readFileSync(file));
  });
  expect(huge).toBe(413);
  const bob = await fetch(`${url}/v1/memory/recall`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ user_id: 'bob', subject: 'Priya Raman' }),
  });
  expect(((await bob.json()) as { state: string }).state).toBe('nothing_stored');
});
