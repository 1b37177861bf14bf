import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { Bench } from 'tinybench';

import { Store, WriteBatch } from '../dist/index.js';
import { fmt, ratioLine, saveResults } from './lib/report.mjs';

const KEYS = Number(process.env.CAIRN_BENCH_KEYS ?? 1_000_000);
const SECONDS = Number(process.env.CAIRN_BENCH_SECONDS ?? 5);
const WRITERS = 32;
const LOAD_BATCH = 10_000;
const READS_PER_ITERATION = 1000;
const SCAN_LENGTH = 100;
const CACHE_BYTES = 64 * 1024 * 1024;
const VALUE = randomBytes(100);

/** The 16-byte key of index `i`. */
function key(i) {
  const k = Buffer.alloc(16);
  k.writeBigUInt64BE(BigInt(i), 8);
  return k;
}

/** A 100-byte value that names its index. */
function value(i) {
  const v = Buffer.from(VALUE);
  v.writeUInt32LE(i >>> 0, 0);
  return v;
}

/** Runs `op(n)` with `concurrency` calls in flight for `seconds`; returns completed ops per second. */
async function inFlight(op, concurrency, seconds, firstIndex) {
  let next = firstIndex;
  let done = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  async function worker() {
    while (performance.now() < deadline) {
      await op(next++);
      done++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { opsPerSec: done / ((performance.now() - started) / 1000), ops: done, next };
}

/** Point reads (in groups of READS_PER_ITERATION) and scans, measured by tinybench. */
async function reads(get, scan) {
  const picks = Array.from({ length: 1 << 16 }, () => Math.floor(Math.random() * KEYS));
  const keys = picks.map(key);
  let p = 0;
  const bench = new Bench({ time: SECONDS * 1000, warmupTime: 500 });
  bench.add('point', () => {
    for (let i = 0; i < READS_PER_ITERATION; i++) {
      const v = get(keys[p++ & 0xffff]);
      if (v === undefined || v === null) throw new Error('a loaded key is missing');
    }
  });
  bench.add('scan', async () => {
    const start = key(picks[p++ & 0xffff] % Math.max(1, KEYS - SCAN_LENGTH));
    const n = await scan(start);
    if (n !== Math.min(SCAN_LENGTH, KEYS)) throw new Error(`a scan returned ${n} entries`);
  });
  await bench.run();
  const [point, scanTask] = bench.tasks;
  for (const t of bench.tasks) {
    if (t.result.state !== 'completed') throw t.result.error ?? new Error(`${t.name}: ${t.result.state}`);
  }
  return {
    pointReadsPerSec: (1000 / point.result.period) * READS_PER_ITERATION,
    scansPerSec: 1000 / scanTask.result.period,
  };
}

async function timeLoad(load) {
  const started = performance.now();
  await load();
  return KEYS / ((performance.now() - started) / 1000);
}

async function benchCairn(dir) {
  const store = await Store.open(dir, { cacheBytes: CACHE_BYTES });
  const loadPerSec = await timeLoad(async () => {
    for (let from = 0; from < KEYS; from += LOAD_BATCH) {
      const batch = new WriteBatch();
      for (let i = from; i < Math.min(KEYS, from + LOAD_BATCH); i++) batch.put('kv', key(i), value(i));
      await store.write(batch);
    }
  });
  const put = (i) => store.write(new WriteBatch().put('kv', key(i), value(i)));
  const single = await inFlight(put, 1, SECONDS, KEYS);
  const stats0 = store.stats();
  const many = await inFlight(put, WRITERS, SECONDS, single.next);
  const stats1 = store.stats();
  const r = await reads(
    (k) => store.get('kv', k),
    async (start) => (await store.range('kv', { start, limit: SCAN_LENGTH })).length,
  );
  const commitsPerGroup = (stats1.commits - stats0.commits) / Math.max(1, stats1.groups - stats0.groups);
  return { store, loadPerSec, single: single.opsPerSec, writers32: many.opsPerSec, ...r, commitsPerGroup };
}

async function benchSqlite(dir) {
  const db = new Database(join(dir, 'bench.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`cache_size = -${CACHE_BYTES / 1024}`);
  db.exec('CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID');
  const insert = db.prepare('INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)');
  const get = db.prepare('SELECT v FROM kv WHERE k = ?').pluck();
  const scan = db.prepare('SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?');
  const loadMany = db.transaction((from, to) => {
    for (let i = from; i < to; i++) insert.run(key(i), value(i));
  });
  const loadPerSec = await timeLoad(async () => {
    for (let from = 0; from < KEYS; from += LOAD_BATCH) loadMany(from, Math.min(KEYS, from + LOAD_BATCH));
  });
  // Each INSERT outside a transaction is its own durable commit; SQLite serialises the 32 writers.
  const put = async (i) => {
    insert.run(key(i), value(i));
  };
  const single = await inFlight(put, 1, SECONDS, KEYS);
  const many = await inFlight(put, WRITERS, SECONDS, single.next);
  const r = await reads(
    (k) => get.get(k),
    async (start) => scan.all(start, SCAN_LENGTH).length,
  );
  db.close();
  return { loadPerSec, single: single.opsPerSec, writers32: many.opsPerSec, ...r };
}

async function benchLmdb(dir) {
  let lmdb;
  try {
    lmdb = await import('lmdb');
  } catch (err) {
    return { skipped: `lmdb did not load: ${err.message}` };
  }
  // Durable, unbatched commits: no commit delay, sync on commit; every put is awaited.
  const db = lmdb.open({
    path: join(dir, 'bench.lmdb'),
    commitDelay: 0,
    noSync: false,
    compression: false,
    encoding: 'binary',
    keyEncoding: 'binary',
    mapSize: 4 * 1024 * 1024 * 1024,
  });
  const loadPerSec = await timeLoad(async () => {
    for (let from = 0; from < KEYS; from += LOAD_BATCH) {
      await db.transaction(() => {
        for (let i = from; i < Math.min(KEYS, from + LOAD_BATCH); i++) db.put(key(i), value(i));
      });
    }
  });
  const put = (i) => db.put(key(i), value(i));
  const single = await inFlight(put, 1, SECONDS, KEYS);
  const many = await inFlight(put, WRITERS, SECONDS, single.next);
  const r = await reads(
    (k) => db.get(k),
    async (start) => {
      let n = 0;
      for (const _ of db.getRange({ start, limit: SCAN_LENGTH })) n++;
      return n;
    },
  );
  await db.close();
  return { loadPerSec, single: single.opsPerSec, writers32: many.opsPerSec, ...r };
}

const root = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
const dirs = Object.fromEntries(['cairn', 'sqlite', 'lmdb'].map((n) => [n, join(root, n)]));
for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
console.log(
  `bench: ${KEYS.toLocaleString('en-US')} keys (16 B) x 100 B values, ${SECONDS}s per timed phase, in ${root}`,
);

try {
  console.log('cairn …');
  const cairn = await benchCairn(dirs.cairn);
  console.log('better-sqlite3 …');
  const sqlite = await benchSqlite(dirs.sqlite);
  console.log('lmdb …');
  const lmdb = await benchLmdb(dirs.lmdb);

  const rows = [
    ['load (puts/s, batches of 10,000)', 'loadPerSec'],
    ['single durable commits/s', 'single'],
    [`commits/s, ${WRITERS} writers in flight`, 'writers32'],
    ['random point reads/s', 'pointReadsPerSec'],
    [`range scans/s (${SCAN_LENGTH} keys)`, 'scansPerSec'],
  ];
  const cols = [
    ['cairn', cairn],
    ['sqlite (WAL, FULL)', sqlite],
    ['lmdb', lmdb],
  ];
  console.log(`\n${'ops/s'.padEnd(38)}${cols.map(([n]) => n.padStart(20)).join('')}`);
  for (const [label, field] of rows) {
    console.log(`${label.padEnd(38)}${cols.map(([, r]) => fmt(r[field]).padStart(20)).join('')}`);
  }
  if (lmdb.skipped) console.log(`(${lmdb.skipped})`);
  const ratios = {
    cairnSingleOverSqliteSingle: cairn.single / sqlite.single,
    cairn32OverCairnSingle: cairn.writers32 / cairn.single,
    cairnReadsOverSqliteReads: cairn.pointReadsPerSec / sqlite.pointReadsPerSec,
  };
  console.log('\nratios');
  console.log(ratioLine('cairn single / sqlite single', ratios.cairnSingleOverSqliteSingle, 0.8));
  console.log(ratioLine(`cairn ${WRITERS} writers / cairn single`, ratios.cairn32OverCairnSingle, 10));
  console.log(ratioLine('cairn point reads / sqlite', ratios.cairnReadsOverSqliteReads, 2));
  console.log(`  (cairn grouped ${cairn.commitsPerGroup.toFixed(1)} commits per fsync with ${WRITERS} writers)`);

  const report = await cairn.store.check();
  console.log(`\ncairn check: ${report.ok ? 'ok' : 'PROBLEMS'} at txn ${report.txn}`);
  console.log(
    `  pages ${report.pagesTotal} total, ${report.pagesReachable} reachable, ${report.pagesFree} free; trees ${report.trees
      .map((t) => `${t.name} (${t.entries})`)
      .join(', ')}`,
  );
  for (const p of report.problems) console.log(`  problem: ${JSON.stringify(p)}`);
  const stats = cairn.store.stats();
  await cairn.store.close();

  const { store: _store, ...cairnNumbers } = cairn;
  saveResults('store', {
    keys: KEYS,
    keyBytes: 16,
    valueBytes: 100,
    secondsPerPhase: SECONDS,
    writers: WRITERS,
    scanLength: SCAN_LENGTH,
    cacheBytes: CACHE_BYTES,
    cairn: cairnNumbers,
    sqlite,
    lmdb,
    ratios,
    cairnCheck: report,
    cairnStats: stats,
  });
  if (!report.ok) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
