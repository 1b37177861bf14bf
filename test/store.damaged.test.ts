import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { ReadOnlyStore, Store } from '../ts/index.js';
import { cairn, tempDir } from './helpers.js';
import { startTestNode, type TestNode } from './node.js';

// A page of the store damaged on disk (one flipped byte) after a clean stop. Found by a failure
// audit: every call that needed the page answered a bare `INTERNAL "internal error"` while
// `/health` said ok and `cairn doctor` said ready; only the node's log named the damage.

const PAGE = 4096;
const CALLER = { tenant: 'local', user: 'default', scope: 'default', agent: 'seed' };

let dir: string;
let cleanup: () => Promise<void>;
let t: TestNode;

/** Flips one byte of page `page` of the data file. */
function flip(page: number) {
  const path = join(dir, 'data.cairn');
  const bytes = readFileSync(path);
  bytes[page * PAGE + 100] = (bytes[page * PAGE + 100] ?? 0) ^ 0x10;
  writeFileSync(path, bytes);
}

/** The tree of the first problem the read-only check finds, if any (none when the store will not open). */
async function damagedTree(): Promise<string | undefined> {
  const store = await ReadOnlyStore.open(dir).catch(() => undefined);
  if (store === undefined) return undefined;
  try {
    return (await store.check()).problems[0]?.tree;
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('damaged'));
  const store = await Store.open(dir);
  for (let batch = 0; batch < 3; batch++) {
    const entities = Array.from({ length: 500 }, (_, i) => ({ name: `Entity ${batch}-${i}`, type: 'thing' }));
    await store.knowledge('remember', CALLER, { facts: { entities, relations: [] } });
  }
  await store.close();
  // Damage one page of the entities' tree, found by trying pages from the end of the file.
  const pages = readFileSync(join(dir, 'data.cairn')).length / PAGE;
  for (let page = pages - 1; page >= 2; page--) {
    flip(page);
    if ((await damagedTree()) === 'k.ent') break;
    flip(page);
  }
  expect(await damagedTree()).toBe('k.ent');
  t = await startTestNode({ dataDir: dir });
});

afterAll(async () => {
  await t?.stop();
  await cleanup();
});

it('says the store is damaged, to the caller, on /health, in memory_status and in cairn doctor', async () => {
  expect((await t.call('GET', '/health')).status).toBe(200);
  // Export reads every entity: some page of it meets the damaged one.
  let cursor: unknown;
  let refused: { status: number; message: string } | undefined;
  for (let i = 0; i < 50 && refused === undefined; i++) {
    const r = await t.call('POST', '/v1/memory/export', { body: cursor === undefined ? {} : { cursor } });
    if (r.status !== 200) refused = { status: r.status, message: r.body.error?.message ?? '' };
    cursor = r.body.next;
    if (cursor === null) break;
  }
  expect(refused?.status).toBe(500);
  expect(refused?.message).toContain('the store is damaged');
  expect(refused?.message).toContain('cairn database check');

  const health = await t.call('GET', '/health');
  expect(health.status).toBe(503);
  expect(health.body).toMatchObject({ status: 'degraded', store: { writes: 'ok' } });
  expect((health.body.store as { damaged?: { reason: string } }).damaged?.reason).toMatch(/corrupt at page \d+/);

  const doctor = await cairn(['doctor', '--data-dir', dir, '--json']);
  const { findings } = JSON.parse(doctor.stdout) as { findings: { check: string; state: string; detail: string }[] };
  const node = findings.find((f) => f.check === 'node');
  expect(node?.state).toBe('problem');
  expect(node?.detail).toContain('the store is damaged');

  // memory_status says so too when it can answer; a write that needs no damaged page still lands.
  const written = await t.call('POST', '/v1/memory/note_write', { body: { key: 'k', kind: 'user_fact', value: 1 } });
  expect(written.status).toBe(200);
  const status = await t.call('GET', '/v1/memory/status');
  if (status.status === 200) {
    expect(status.body.node).toMatchObject({ status: 'degraded', damaged: { reason: expect.any(String) } });
  } else {
    expect(status.body.error?.message).toContain('the store is damaged');
  }
});
