import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Store, StoreError, WriteBatch } from '../ts/index.js';
import { key16, rejection, tempDir, thrown } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const open: Store[] = [];

async function openStore(path = dir): Promise<Store> {
  const store = await Store.open(path);
  open.push(store);
  return store;
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('binding'));
});

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await cleanup();
});

describe('point reads and writes', () => {
  it('reads back what was written, and nothing else', async () => {
    const store = await openStore();
    const txn = await store.write(
      new WriteBatch().put('t', 'a', 'A').put('t', key16(7), 'seven').put('u', 'a', 'other'),
    );
    expect(txn).toMatch(/^\d+$/);
    expect(store.get('t', 'a')?.toString()).toBe('A');
    expect(store.get('t', key16(7))?.toString()).toBe('seven');
    expect(store.get('u', 'a')?.toString()).toBe('other');
    expect(store.get('t', 'missing')).toBeNull();
    expect(store.get('never-written', 'a')).toBeNull();
    // Each read returns its own bytes: later reads do not change an earlier result.
    const first = store.get('t', 'a');
    store.get('u', 'a');
    expect(first?.toString()).toBe('A');
  });

  it('gives increasing transaction ids and applies deletes', async () => {
    const store = await openStore();
    const t1 = BigInt(await store.write(new WriteBatch().put('t', 'k', '1')));
    const t2 = BigInt(await store.write(new WriteBatch().put('t', 'k', '2')));
    expect(t2).toBe(t1 + 1n);
    expect(store.get('t', 'k')?.toString()).toBe('2');
    await store.write(new WriteBatch().delete('t', 'k').delete('t', 'never-there'));
    expect(store.get('t', 'k')).toBeNull();
    expect(store.stats().txn).toBe((t2 + 1n).toString());
  });

  it('keeps data across close and reopen', async () => {
    const first = await openStore();
    await first.write(new WriteBatch().put('t', 'durable', 'yes'));
    await first.close();
    const second = await openStore();
    expect(second.get('t', 'durable')?.toString()).toBe('yes');
  });

  it('round-trips values that spill to overflow pages', async () => {
    const store = await openStore();
    const sizes = [0, 1, 3000, 4096, 5000, 70_000, 1_000_000, 3_500_000];
    const values = sizes.map((n, i) => Buffer.alloc(n, i + 1).fill(`v${i}-`, 0, Math.min(n, 4)));
    const batch = new WriteBatch();
    for (const [i, v] of values.entries()) batch.put('big', key16(i), v);
    await store.write(batch);
    for (const [i, v] of values.entries()) expect(store.get('big', key16(i))?.equals(v)).toBe(true);
    const entries = await store.range('big');
    expect(entries.map((e) => e.value.length)).toEqual(sizes);
    // Overwrite the largest with a small value, then reopen: both survive.
    await store.write(new WriteBatch().put('big', key16(6), 'small now'));
    await store.close();
    const again = await openStore();
    expect(again.get('big', key16(6))?.toString()).toBe('small now');
    expect(again.get('big', key16(7))?.equals(values[7] as Buffer)).toBe(true);
    expect((await again.check()).ok).toBe(true);
  });

  it('commits 32 concurrent writes in fewer groups than writes', async () => {
    const store = await openStore();
    await store.write(new WriteBatch().put('t', 'warm', 'up'));
    const before = store.stats();
    const ids = await Promise.all(
      Array.from({ length: 32 }, (_, i) => store.write(new WriteBatch().put('t', key16(i), `v${i}`))),
    );
    const after = store.stats();
    expect(new Set(ids).size).toBe(32);
    for (let i = 0; i < 32; i++) expect(store.get('t', key16(i))?.toString()).toBe(`v${i}`);
    expect(after.commits - before.commits).toBe(32);
    expect(after.groups - before.groups).toBeLessThan(32);
  });

  it('submits writes in call order, so the last one issued wins', async () => {
    const store = await openStore();
    const pending = Array.from({ length: 50 }, (_, i) => store.write(new WriteBatch().put('t', 'same', `${i}`)));
    const ids = (await Promise.all(pending)).map(BigInt);
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe((ids[i - 1] as bigint) + 1n);
    expect(store.get('t', 'same')?.toString()).toBe('49');
  });
});

describe('range and prefix scans', () => {
  it('returns entries in key order within [start, end), up to limit', async () => {
    const store = await openStore();
    const batch = new WriteBatch();
    for (let i = 0; i < 1000; i++) batch.put('n', key16(i), `v${i}`);
    await store.write(batch);
    const all = await store.range('n');
    expect(all).toHaveLength(1000);
    expect(all.map((e) => e.key.readBigUInt64BE(8))).toEqual(Array.from({ length: 1000 }, (_, i) => BigInt(i)));
    const mid = await store.range('n', { start: key16(100), end: key16(200) });
    expect(mid).toHaveLength(100);
    expect(mid[0]?.value.toString()).toBe('v100');
    expect(mid[99]?.value.toString()).toBe('v199');
    const limited = await store.range('n', { start: key16(990), limit: 5 });
    expect(limited.map((e) => e.value.toString())).toEqual(['v990', 'v991', 'v992', 'v993', 'v994']);
    expect(await store.range('n', { start: key16(5000) })).toEqual([]);
    expect(await store.range('empty-tree')).toEqual([]);
    expect(await store.range('n', { limit: 0 })).toEqual([]);
  });

  it('scans by prefix', async () => {
    const store = await openStore();
    await store.write(
      new WriteBatch()
        .put('p', 'user:1:name', 'ana')
        .put('p', 'user:1:mail', 'ana@x')
        .put('p', 'user:10:name', 'bo')
        .put('p', 'user:2:name', 'cy')
        .put('p', 'users', 'not a user'),
    );
    const one = await store.range('p', { prefix: 'user:1:' });
    expect(one.map((e) => e.key.toString())).toEqual(['user:1:mail', 'user:1:name']);
    const users = await store.range('p', { prefix: 'user:', limit: 3 });
    expect(users.map((e) => e.key.toString())).toEqual(['user:10:name', 'user:1:mail', 'user:1:name']);
    expect(await store.range('p', { prefix: 'nobody' })).toEqual([]);
    const err = await rejection(store.range('p', { prefix: 'a', start: 'b' }));
    expect(err).toBeInstanceOf(StoreError);
    expect(err.code).toBe('INVALID_ARGUMENT');
  });
});

describe('snapshots', () => {
  it('keep seeing their commit while writes go on', async () => {
    const store = await openStore();
    const batch = new WriteBatch();
    for (let i = 0; i < 500; i++) batch.put('s', key16(i), 'old');
    const txn = await store.write(batch);
    const snap = store.snapshot();
    expect(snap.txn).toBe(txn);
    const writes: Promise<string>[] = [];
    for (let i = 0; i < 500; i += 5) {
      writes.push(
        store.write(
          new WriteBatch()
            .put('s', key16(i), 'new')
            .delete('s', key16(i + 1))
            .put('s', key16(1000 + i), 'added'),
        ),
      );
    }
    const during = snap.range('s');
    await Promise.all(writes);
    const seen = await during;
    const after = await snap.range('s');
    for (const entries of [seen, after]) {
      expect(entries).toHaveLength(500);
      expect(entries.every((e) => e.value.toString() === 'old')).toBe(true);
    }
    expect(snap.get('s', key16(1))?.toString()).toBe('old');
    expect(snap.get('s', key16(1000))).toBeNull();
    expect(store.get('s', key16(0))?.toString()).toBe('new');
    expect(store.get('s', key16(1))).toBeNull();
    expect(store.get('s', key16(1000))?.toString()).toBe('added');
    snap.close();
    snap.close();
    expect(thrown(() => snap.get('s', key16(0))).code).toBe('STORE_CLOSED');
    expect((await rejection(snap.range('s'))).code).toBe('STORE_CLOSED');
  });
});

describe('errors', () => {
  it('answers STORE_CLOSED on every call after close, and close is idempotent', async () => {
    const store = await openStore();
    await store.write(new WriteBatch().put('t', 'k', 'v'));
    await store.close();
    await store.close();
    const err = thrown(() => store.get('t', 'k'));
    expect(err).toBeInstanceOf(StoreError);
    expect(err.code).toBe('STORE_CLOSED');
    expect((await rejection(store.write(new WriteBatch().put('t', 'k', 'v')))).code).toBe('STORE_CLOSED');
    expect((await rejection(store.range('t'))).code).toBe('STORE_CLOSED');
    expect((await rejection(store.check())).code).toBe('STORE_CLOSED');
    expect(thrown(() => store.snapshot()).code).toBe('STORE_CLOSED');
  });

  it('refuses a second open of the same directory in this process', async () => {
    await openStore();
    const err = await rejection(Store.open(dir));
    expect(err).toBeInstanceOf(StoreError);
    expect(err.code).toBe('STORE_LOCKED');
  });

  it('refuses a directory held by another process, naming its pid', async () => {
    const holder = spawn(process.execPath, [fileURLToPath(new URL('./fixtures/hold.mjs', import.meta.url)), dir], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      await waitForLine(holder, 'ready');
      const err = await rejection(Store.open(dir));
      expect(err.code).toBe('STORE_LOCKED');
      expect(err.message).toContain(String(holder.pid));
    } finally {
      holder.stdin?.end();
      if (holder.exitCode === null) await once(holder, 'exit');
    }
    // Released by the holder's close: this process can open it now.
    await openStore();
  });

  it('rejects a malformed or oversized batch as INVALID_ARGUMENT and changes nothing', async () => {
    const store = await openStore();
    await store.write(new WriteBatch().put('t', 'k', 'before'));
    const txn = store.stats().txn;
    const good = new WriteBatch().put('t', 'k', 'after').encode();
    // A valid put followed by a truncated one: the whole batch must be refused.
    const truncated = Buffer.concat([good, good.subarray(0, good.length - 2)]);
    const cases: Promise<string>[] = [
      store.inner.write(truncated),
      store.inner.write(Buffer.concat([good, Buffer.from([7, 1, 0, 116, 0, 0, 0, 0])])),
      store.write(new WriteBatch().put('t', 'k', 'after').put('t', Buffer.alloc(1537), 'too long a key')),
      store.write(new WriteBatch().put('t', 'k', 'after').put('', 'k', 'empty tree name')),
      store.write(new WriteBatch().put('t', 'k', 'after').put('x'.repeat(256), 'k', 'tree name too long')),
    ];
    for (const pending of cases) {
      const err = await rejection(pending);
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message.length).toBeGreaterThan(0);
    }
    expect(store.get('t', 'k')?.toString()).toBe('before');
    expect(store.stats().txn).toBe(txn);
    expect(thrown(() => store.get('', 'k')).code).toBe('INVALID_ARGUMENT');
  });

  it('answers INVALID_ARGUMENT for values of the wrong type', async () => {
    const store = await openStore();
    const wrongKey = thrown(() => store.get('t', 42 as unknown as string));
    expect(wrongKey).toBeInstanceOf(StoreError);
    expect(wrongKey.code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => store.inner.get(7 as unknown as string, Buffer.from('k'))).code).toBe('StringExpected');
    expect((await rejection(store.range('t', { limit: -1 }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(Store.open(dir, { cacheBytes: -5 }))).code).toBe('INVALID_ARGUMENT');
    const names = await rejection(Store.open(dir, { nameCacheBytes: 1.5 }));
    expect(names.code).toBe('INVALID_ARGUMENT');
    expect(names.message).toContain('nameCacheBytes must be a whole number of bytes');
  });
});

describe('maintenance', () => {
  it('check reports a clean store with its trees', async () => {
    const store = await openStore();
    const batch = new WriteBatch();
    for (let i = 0; i < 2000; i++) batch.put('a', key16(i), Buffer.alloc(i % 7 === 0 ? 5000 : 50, 1));
    batch.put('b', 'only', 'one');
    await store.write(batch);
    const report = await store.check();
    expect(report.ok).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.txn).toBe(store.stats().txn);
    expect(report.pagesReachable).toBeGreaterThan(0);
    const trees = Object.fromEntries(report.trees.map((t) => [t.name, t.entries]));
    expect(trees.a).toBe(2000);
    expect(trees.b).toBe(1);
  });

  it('backup makes a store that opens and equals the source at its transaction', async () => {
    const { dir: backupParent, cleanup: cleanupBackup } = await tempDir('backup');
    try {
      const store = await openStore();
      const batch = new WriteBatch();
      for (let i = 0; i < 3000; i++) batch.put('b', key16(i), `value-${i}`);
      batch.put('b', 'big', Buffer.alloc(20_000, 9));
      await store.write(batch);
      // Writes racing the backup land in it exactly when their txn is not after the backup's.
      const racing = Array.from({ length: 20 }, (_, i) =>
        store.write(new WriteBatch().put('race', key16(i), 'x')).then((t) => ({ i, txn: BigInt(t) })),
      );
      const dest = `${backupParent}/copy`;
      const report = await store.backup(dest);
      const raced = await Promise.all(racing);
      const copy = await openStore(dest);
      expect((await copy.check()).ok).toBe(true);
      expect(copy.stats().txn).toBe(report.txn);
      const source = await store.range('b');
      const copied = await copy.range('b');
      expect(copied.length).toBe(source.length);
      copied.forEach((e, i) => {
        expect(e.key.equals(source[i]?.key as Buffer)).toBe(true);
        expect(e.value.equals(source[i]?.value as Buffer)).toBe(true);
      });
      for (const { i, txn } of raced) {
        const present = copy.get('race', key16(i)) !== null;
        expect(present).toBe(txn <= BigInt(report.txn));
      }
    } finally {
      await cleanupBackup();
    }
  });

  it('compact keeps every live entry and drops deleted ones', async () => {
    const store = await openStore();
    const fill = new WriteBatch();
    for (let i = 0; i < 4000; i++) fill.put('c', key16(i), Buffer.alloc(200, i & 0xff));
    await store.write(fill);
    const drop = new WriteBatch();
    for (let i = 0; i < 4000; i += 2) drop.delete('c', key16(i));
    await store.write(drop);
    await store.checkpoint();
    const report = await store.compact({ purge: true });
    expect(report.pagesAfter).toBeLessThanOrEqual(report.pagesBefore);
    const left = await store.range('c');
    expect(left).toHaveLength(2000);
    left.forEach((e, n) => {
      const i = 2 * n + 1;
      expect(e.key.equals(key16(i))).toBe(true);
      expect(e.value.equals(Buffer.alloc(200, i & 0xff))).toBe(true);
    });
    expect((await store.check()).ok).toBe(true);
    await store.close();
    const again = await openStore();
    expect(await again.range('c')).toHaveLength(2000);
    expect((await again.check()).ok).toBe(true);
  });
});

async function waitForLine(child: ChildProcess, line: string): Promise<void> {
  let buffered = '';
  for await (const chunk of child.stdout ?? []) {
    buffered += String(chunk);
    if (buffered.split('\n').includes(line)) return;
  }
  throw new Error(`child exited before printing ${line}`);
}
