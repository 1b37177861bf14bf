import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { storeLockHolder } from '../ts/server/store-lock.js';
import { asUserCommand, CLI, cairn, tempDir } from './helpers.js';

// `cairn database backup|restore|compact` as users run them (the built CLI in its own process),
// on a store directly and through a running node.

let root: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
const exec = promisify(execFile);
const ADMIN = 'cairn_database-test-admin-token-0123456789abcdef';
const caller = (scope: string) => ({ tenant: 'local', user: 'default', scope, agent: 'test' });

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('cli-db'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

/** A store in `dir` holding a passage in scope `keep` and one naming `marker` in scope `gone`. */
async function seed(dir: string, marker: string): Promise<void> {
  const store = await Store.open(dir);
  try {
    for (const [scope, content] of [
      ['keep', 'Mira Lund works at Northwind Labs in Bergen.'],
      ['gone', `${marker} was seen at the harbour. ${marker} left at noon.`],
    ] as const) {
      const r = await store.knowledge('remember', caller(scope), {
        content,
        facts: { entities: [{ name: 'Mira Lund', type: 'person' }], relations: [] },
      });
      expect(r.error).toBeUndefined();
    }
    await store.checkpoint();
  } finally {
    await store.close();
  }
}

/** How many times `text` occurs in the files of `dir`. */
function occurrences(dir: string, text: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) {
    const bytes = readFileSync(join(dir, f));
    for (let i = bytes.indexOf(text); i >= 0; i = bytes.indexOf(text, i + 1)) n++;
  }
  return n;
}

async function recall(dir: string, scope: string, subject: string) {
  const store = await Store.open(dir);
  try {
    return await store.knowledge('recall', caller(scope), { subject });
  } finally {
    await store.close();
  }
}

it('backs a store up and restores it into an empty data dir, and refuses to overwrite', async () => {
  const data = join(root, 'data');
  const dest = join(root, 'backup');
  await seed(data, 'Quillon');
  const made = await cairn(['database', 'backup', dest, '--data-dir', data, '--json']);
  expect(made.code, made.stderr).toBe(0);
  expect(JSON.parse(made.stdout)).toMatchObject({ dest, pages: expect.any(Number), txn: expect.any(String) });

  const again = await cairn(['database', 'backup', dest, '--data-dir', data]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('already holds a store');

  const restored = join(root, 'restored');
  const r = await cairn(['database', 'restore', dest, '--data-dir', restored, '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ dataDir: restored });
  const facts = await recall(restored, 'keep', 'Mira Lund');
  expect(facts.state).toBe('answered');

  const over = await cairn(['database', 'restore', dest, '--data-dir', data]);
  expect(over.code).toBe(1);
  expect(over.stderr).toContain('already holds a store');
  // A target holding other files says what is there, so a mistyped path shows.
  const other = join(root, 'other');
  mkdirSync(join(other, 'src'), { recursive: true });
  writeFileSync(join(other, 'README.md'), 'x');
  const into = await cairn(['database', 'restore', dest, '--data-dir', other]);
  expect(into.code).toBe(1);
  expect(into.stderr).toContain(`${other} is not empty (README.md, src); restore only into an empty data dir`);
  rmSync(other, { recursive: true });
  // Nothing is left beside the targets.
  expect(readdirSync(root).sort()).toEqual(['backup', 'data', 'restored']);
});

/**
 * Runs the CLI as a user whom permissions stop (root runs without the capabilities that override
 * them), as the service's user meets its root-owned `/var/lib`.
 */
async function asUser(args: string[]) {
  const [file, all] = asUserCommand(args);
  try {
    const { stdout, stderr } = await exec(file, all);
    return { code: 0, stdout, stderr };
  } catch (err) {
    return err as { code: number; stdout: string; stderr: string };
  }
}

it('restores into an empty data dir whose parent this user cannot write; a missing one there is refused', async () => {
  const data = join(root, 'data');
  const dest = join(root, 'backup');
  await seed(data, 'Quillon');
  expect((await cairn(['database', 'backup', dest, '--data-dir', data])).code).toBe(0);
  // As the installer lays it out: /var/lib (root's) holding the service user's empty cairn dir.
  const varlib = join(root, 'varlib');
  const target = join(varlib, 'cairn');
  mkdirSync(target, { recursive: true, mode: 0o700 });
  chmodSync(varlib, 0o555);
  try {
    const r = await asUser(['database', 'restore', dest, '--data-dir', target, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(target)).toEqual(['data.cairn']);
    const missing = join(varlib, 'other');
    const refused = await asUser(['database', 'restore', dest, '--data-dir', missing, '--json']);
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stdout).error as { code: string; message: string };
    expect(error.code).toBe('FORBIDDEN');
    expect(error.message).toContain(`cannot write the data dir ${missing}`);
    expect(readdirSync(varlib)).toEqual(['cairn']);
  } finally {
    chmodSync(varlib, 0o755);
  }
  expect((await recall(target, 'keep', 'Mira Lund')).state).toBe('answered');
});

/** Each file of `dir` with its mode, size and a digest of its bytes. */
function listing(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((f) => {
      const path = join(dir, f);
      const { mode, size } = statSync(path);
      return `${f} ${mode.toString(8)} ${size} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    });
}

it('database check of a backup, or of a data dir whose files are read-only, changes nothing there', async () => {
  const data = join(root, 'data');
  const dest = join(root, 'backup');
  await seed(data, 'Quillon');
  expect((await cairn(['database', 'backup', dest, '--data-dir', data])).code).toBe(0);
  const before = listing(dest);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
  const r = await cairn(['database', 'check', '--data-dir', dest, '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, dataDir: dest, problems: [] });
  // No LOCK, no log: the backup is exactly as it was.
  expect(listing(dest)).toEqual(before);

  // A data dir this user may only read (a read-only mount, a copy made read-only, another
  // user's files with read access). `asUser` drops root's power to override permissions, so
  // this runs even as root (the one run where a plain chmod would not stop the CLI).
  // Its `LOCK` unreadable even so (the store makes it 0600): the kernel's lock table says no
  // process holds it.
  const ro = join(root, 'read-only');
  cpSync(data, ro, { recursive: true });
  for (const f of readdirSync(ro)) chmodSync(join(ro, f), 0o400);
  chmodSync(join(ro, 'LOCK'), 0o000);
  chmodSync(ro, 0o500);
  try {
    const roBefore = listing(ro);
    const c = await asUser(['database', 'check', '--data-dir', ro, '--json']);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ ok: true, problems: [] });
    expect(listing(ro)).toEqual(roBefore);
  } finally {
    chmodSync(ro, 0o700);
  }
  // A store held by a process is refused, unreadable `LOCK` or not.
  const held = await Store.open(data);
  try {
    chmodSync(join(data, 'LOCK'), 0o000);
    const c = await asUser(['database', 'check', '--data-dir', data, '--json']);
    expect(c.code).toBe(1);
    const { error } = JSON.parse(c.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('STORE_LOCKED');
  } finally {
    chmodSync(join(data, 'LOCK'), 0o600);
    await held.close();
  }
});

it('refuses a damaged backup and leaves the target as it was', async () => {
  const data = join(root, 'data');
  const dest = join(root, 'backup');
  await seed(data, 'Quillon');
  expect((await cairn(['database', 'backup', dest, '--data-dir', data])).code).toBe(0);
  const file = join(dest, 'data.cairn');
  const bytes = readFileSync(file);
  // Scribble over the middle of the last page: a checksum no longer matches.
  bytes.fill(0x5a, bytes.length - 3000, bytes.length - 1000);
  writeFileSync(file, bytes);
  const target = join(root, 'target');
  mkdirSync(target);
  const r = await cairn(['database', 'restore', dest, '--data-dir', target]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/does not check clean|STORE_CORRUPT/);
  expect(readdirSync(target)).toEqual([]);
  expect(readdirSync(root).sort()).toEqual(['backup', 'data', 'target']);
});

it('restore of a Memory Package names it and `cairn import`, and makes nothing (new-user audit)', async () => {
  const data = join(root, 'data');
  await seed(data, 'Quillon');
  const pkg = join(root, 'package');
  expect((await cairn(['export', pkg, '--scope', 'keep', '--data-dir', data])).code).toBe(0);
  const target = join(root, 'target');
  const r = await cairn(['database', 'restore', pkg, '--data-dir', target, '--json']);
  expect(r.code).toBe(1);
  // Before: only "no backup at DIR (no data.cairn there)".
  expect(JSON.parse(r.stdout)).toEqual({
    error: {
      code: 'NOT_FOUND',
      message: `no backup at ${pkg} (no data.cairn there): it is a Memory Package (\`cairn export\` wrote it), which \`cairn import ${pkg}\` takes into a store`,
      details: [],
    },
  });
  expect(existsSync(target)).toBe(false);
});

it('compact --purge erases forgotten text from the files; what was kept stays', async () => {
  const data = join(root, 'data');
  await seed(data, 'Zorblaxian');
  expect(occurrences(data, 'Zorblaxian')).toBeGreaterThan(0);
  const store = await Store.open(data);
  const forgot = await store.knowledge('forget', caller('gone'), { all: true });
  expect(forgot.state).toBe('forgotten');
  await store.close();
  // Forgotten is unreachable at once, but the bytes are still in freed pages and the log.
  expect(occurrences(data, 'Zorblaxian')).toBeGreaterThan(0);

  const r = await cairn(['database', 'compact', '--purge', '--data-dir', data, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as { purge: boolean; bytesZeroed: number };
  expect(report.purge).toBe(true);
  expect(report.bytesZeroed).toBeGreaterThan(0);
  expect(occurrences(data, 'Zorblaxian')).toBe(0);
  expect((await recall(data, 'keep', 'Mira Lund')).state).toBe('answered');
  expect((await cairn(['database', 'check', '--data-dir', data])).code).toBe(0);
});

/** `cairn serve` on `data` with the admin token, once it has written its node.json (or given up). */
async function serve(data: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  return child;
}

/** The words of `words` whose first seven letters occur, in any case, in the files of `dir`. */
function wordsOnDisk(dir: string, words: readonly string[]): string[] {
  const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1').toLowerCase());
  return words.filter((w) => files.some((text) => text.includes(w.slice(0, 7).toLowerCase())));
}

it('through a running node, compact --purge erases the words of every form of forget (the audit)', async () => {
  const data = join(root, 'data');
  await seed(data, 'Quillon');
  const child = await serve(data);
  const { url } = JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string };
  const post = async (verb: string, body: Record<string, unknown>, user = 'default') => {
    const res = await fetch(`${url}/v1/memory/${verb}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'x-cairn-user': user },
      body: JSON.stringify(body),
    });
    const reply = (await res.json()) as Record<string, unknown>;
    expect(res.status, `${verb} ${JSON.stringify(body)}: ${JSON.stringify(reply)}`).toBe(200);
    return reply;
  };
  const scope = 't4';
  await post('remember', {
    scope,
    content: 'Xavier Quillfeather met Olga Petrova at the Vantablue gallery.',
    facts: {
      entities: [
        { name: 'Xavier Quillfeather', type: 'person', attributes: { codename: 'zephyrmoss' } },
        { name: 'Olga Petrova', type: 'person', attributes: { grimoirequest: 'quoitsmanship' } },
        { name: 'Mira Lund', type: 'person' },
      ],
      relations: [{ source: 'Mira Lund', target: 'Northwind Labs', type: 'plinthwhisper' }],
    },
  });
  const passage = await post('remember', { scope, content: 'The orreryhouse at Tessellate Point hums at dusk.' });
  await post('remember', { scope, content: 'Glaucous gulls nest near Wrenfold.', source: 'umbrageous-fieldbook' });
  await post('note_write', { scope, key: 'nightjarledger', value: 'saffronvault', kind: 'decision' });
  // Keyed writes: their idempotency records spell the key, the task and the key sent.
  await post('note_write', {
    scope,
    key: 'bramblekey',
    value: 'tinselvalue',
    kind: 'decision',
    idempotencyKey: 'juniperidem',
  });
  await post('handoff_create', {
    scope,
    taskId: 'marigoldtask',
    summary: 'ptarmiganplan',
    idempotencyKey: 'cobaltidem',
  });
  const file = await post('document', {
    scope,
    name: 'sorrelmanual.txt',
    content_base64: Buffer.from('Umberquartz glows in the cellar.').toString('base64'),
  });
  await post('remember', { scope: 'larkspurvale', content: 'Brindlecombe keeps the keys.' });
  await post(
    'remember',
    { scope: 'fernwickshire', content: 'Ottoline Ravensworth keeps bees in Quenbymoor.' },
    'hollowmere',
  );

  const forgets: Record<string, unknown>[] = [
    { scope, attribute: { subject: 'Olga Petrova', key: 'grimoirequest' } },
    { scope, fact: { from: 'Mira Lund', to: 'Northwind Labs', type: 'plinthwhisper' } },
    { scope, subject: 'Xavier Quillfeather' },
    { scope, subject: 'Olga Petrova' },
    { scope, passage: passage.doc_id },
    { scope, source: 'umbrageous-fieldbook' },
    { scope, note: { key: 'nightjarledger' } },
    { scope, note: { key: 'bramblekey' } },
    { scope, handoff: { taskId: 'marigoldtask' } },
    { scope, passage: file.doc_id },
    { scope: 'larkspurvale', all: true },
  ];
  for (const body of forgets) expect((await post('forget', body)).state).toBe('forgotten');
  expect((await post('delete_user', { confirm: true }, 'hollowmere')).state).toBe('forgotten');
  const words = [
    ...['Quillfeather', 'Petrova', 'Vantablue', 'zephyrmoss', 'quoitsmanship', 'grimoirequest', 'plinthwhisper'],
    ...['orreryhouse', 'Tessellate', 'Glaucous', 'Wrenfold', 'umbrageous', 'nightjarledger', 'saffronvault'],
    ...['bramblekey', 'tinselvalue', 'juniperidem', 'marigoldtask', 'ptarmiganplan', 'cobaltidem'],
    ...['sorrelmanual', 'Umberquartz'],
    ...['Brindlecombe', 'Ravensworth', 'Quenbymoor'],
    // the names of a scope forgotten whole, of a deleted user and of their scope
    ...['larkspurvale', 'hollowmere', 'fernwickshire'],
  ];
  const env = { CAIRN_ADMIN_TOKEN: ADMIN };
  // Unreachable at once, but still in the log or freed pages.
  expect(wordsOnDisk(data, words)).not.toEqual([]);
  const r = await cairn(['database', 'compact', '--purge', '--data-dir', data, '--json'], env);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ purge: true });
  expect(wordsOnDisk(data, words)).toEqual([]);
  expect(wordsOnDisk(data, ['Northwind', 'Mira Lund'])).toEqual(['Northwind', 'Mira Lund']);
  // Forgotten, and still known to be: again is "already".
  for (const body of forgets) expect((await post('forget', body)).state).toBe('already_forgotten');

  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});

it('refuses a backup DEST inside the data dir, by any path to it, and makes nothing there', async () => {
  const data = join(root, 'data');
  await seed(data, 'Quillon');
  symlinkSync(data, join(root, 'link'));
  const before = readdirSync(data).sort();
  for (const dest of [join(data, 'sub'), join(root, 'link', 'nightly')]) {
    const r = await cairn(['database', 'backup', dest, '--data-dir', data, '--json']);
    expect(r.code, dest).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'DEST' }] });
    expect(r.stdout).toContain('inside the data dir');
  }
  expect(readdirSync(data).sort()).toEqual(before);
});

it('goes through a running node for backup and compact, and refuses restore under it', async () => {
  const data = join(root, 'data');
  await seed(data, 'Quillon');
  // A staging dir a node stopped mid-backup left: gone once a node holds the store again.
  mkdirSync(join(data, '.backup-0123456789ab'));
  writeFileSync(join(data, '.backup-0123456789ab', 'data.cairn'), 'Quillon');
  const child = await serve(data);
  expect(readdirSync(data).filter((f) => f.startsWith('.backup-'))).toEqual([]);
  expect(existsSync(join(data, 'node.json'))).toBe(true);

  const dest = join(root, 'backup');
  const noToken = await cairn(['database', 'backup', dest, '--data-dir', data], { CAIRN_ADMIN_TOKEN: '' });
  expect(noToken.code).toBe(1);
  expect(noToken.stderr).toContain('CAIRN_ADMIN_TOKEN');

  const env = { CAIRN_ADMIN_TOKEN: ADMIN };
  const made = await cairn(['database', 'backup', dest, '--data-dir', data, '--json'], env);
  expect(made.code, made.stderr).toBe(0);
  // The node sent the copy and the CLI wrote it: whole (its digest as the node said), only the
  // data file in DEST, and no staging copy left in the data dir.
  const sent = JSON.parse(made.stdout) as { dest: string; bytes: number; sha256: string };
  const file = readFileSync(join(dest, 'data.cairn'));
  expect(sent).toMatchObject({ dest, bytes: file.length });
  expect(createHash('sha256').update(file).digest('hex')).toBe(sent.sha256);
  expect(readdirSync(dest)).toEqual(['data.cairn']);
  expect(readdirSync(data).filter((f) => f.startsWith('.'))).toEqual([]);
  // Inside the node's data dir: refused by the CLI, and by the node's route that writes a DEST itself.
  const inside = await cairn(['database', 'backup', join(data, 'b'), '--data-dir', data], env);
  expect(inside.code).toBe(1);
  expect(inside.stderr).toContain('inside the data dir');
  const url = (JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string }).url;
  const routed = await fetch(`${url}/v1/admin/database/backup`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ dest: join(data, 'b') }),
  });
  expect(routed.status).toBe(422);
  expect(existsSync(join(data, 'b'))).toBe(false);
  const compacted = await cairn(['database', 'compact', '--data-dir', data, '--json'], env);
  expect(compacted.code, compacted.stderr).toBe(0);
  expect(JSON.parse(compacted.stdout)).toMatchObject({ purge: false, pagesAfter: expect.any(Number) });
  const restore = await cairn(['database', 'restore', dest, '--data-dir', data], env);
  expect(restore.code).toBe(1);
  expect(restore.stderr).toContain('a node is running');

  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  // The backup taken through the node is a store of its own.
  expect((await recall(dest, 'keep', 'Mira Lund')).state).toBe('answered');
});

it('restores a copy of a data dir taken after kill -9, with the writes only its log held; a live source is refused', async () => {
  const data = join(root, 'data');
  const child = await serve(data);
  const { url } = JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string };
  const keys = Array.from({ length: 10 }, (_, i) => `crash-note-${i}`);
  for (const key of keys) {
    const res = await fetch(`${url}/v1/memory/note_write`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'default', key, value: 'acknowledged', kind: 'decision' }),
    });
    expect(res.status, await res.text()).toBe(200);
  }
  // Files copied from under a running node are no consistent copy: refused, naming the node.
  const live = await cairn(['database', 'restore', data, '--data-dir', join(root, 'from-live'), '--json']);
  expect(live.code).toBe(1);
  const refusal = JSON.parse(live.stdout) as { error: { code: string; message: string } };
  expect(refusal.error.code).toBe('UNAVAILABLE');
  expect(refusal.error.message).toContain(url);
  expect(refusal.error.message).toContain('cairn database backup');
  expect(existsSync(join(root, 'from-live'))).toBe(false);

  child.kill('SIGKILL');
  // Its lock goes when the kernel closes its files: nothing writes to them after that.
  while (storeLockHolder(data) !== null) await new Promise((r) => setTimeout(r, 20));
  const copy = join(root, 'copy');
  cpSync(data, copy, { recursive: true });
  // Digests, not the bytes: vitest's deep compare of two large Buffers took minutes on a busy machine.
  const digests = () =>
    ['data.cairn', 'wal.cairn'].map((f) =>
      createHash('sha256')
        .update(readFileSync(join(copy, f)))
        .digest('hex'),
    );
  const sourceDigests = digests();
  const listing = readdirSync(copy).sort();
  // A check reads the copy as it is: the log's writes replayed in memory, nothing written there.
  const checked = await cairn(['database', 'check', '--data-dir', copy, '--json']);
  expect(checked.code, checked.stderr).toBe(0);
  expect(digests()).toEqual(sourceDigests);
  expect(readdirSync(copy).sort()).toEqual(listing);
  const target = join(root, 'restored');
  const r = await cairn(['database', 'restore', copy, '--data-dir', target, '--json']);
  expect(r.code, r.stderr).toBe(0);
  // The check saw the writes only the log held: the restore, which replays it, reaches the same transaction.
  expect((JSON.parse(checked.stdout) as { txn: string }).txn).toBe((JSON.parse(r.stdout) as { txn: string }).txn);
  const listed = await cairn(['memories', 'list', '--data-dir', target, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  expect(keys.filter((k) => !listed.stdout.includes(`"${k}"`))).toEqual([]);
  // The source was copied, not opened: its files are as they were.
  expect(digests()).toEqual(sourceDigests);
  expect(readdirSync(root).sort()).toEqual(['copy', 'data', 'restored']);
});
