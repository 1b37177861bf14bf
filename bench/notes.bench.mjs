// Notes: compare-and-set writes and hybrid queries through the engine (`store.notes`), side by
// side with a store built the way OpenContinuity's Lite profile is: better-sqlite3 with
// `memories_current` (one row per key: current value and version), `memory_events`
// (append-only), an FTS5 trigram table over key + value, CAS as `UPDATE … WHERE version = ?` in
// the transaction of the event insert, WAL and synchronous=FULL. Same notes, same queries.
//
// Environment: CAIRN_BENCH_NOTES (default 10000), CAIRN_BENCH_CAS (CAS writes per mode, default
// 1000), CAIRN_BENCH_QUERIES (default 2000), CAIRN_BENCH_WRITERS (in-flight writers, default 8).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { Store } from '../dist/index.js';
import { fmt, percentile, ratioLine, saveResults, table } from './lib/report.mjs';

const NOTES = Number(process.env.CAIRN_BENCH_NOTES ?? 10_000);
const CAS = Number(process.env.CAIRN_BENCH_CAS ?? 1000);
const QUERIES = Number(process.env.CAIRN_BENCH_QUERIES ?? 2000);
const WRITERS = Number(process.env.CAIRN_BENCH_WRITERS ?? 8);
const LIMIT = 10;

// A deterministic generator, so both stores get the same notes and queries on every run.
let seed = 42;
function rand() {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const WORDS = (
  'editor theme dark light font mono deploy staging production rollback release branch review ' +
  'python rust typescript golang database postgres sqlite cache redis queue worker cron backup ' +
  'invoice customer billing refund report dashboard metrics alert oncall incident latency budget ' +
  'meeting friday monday sprint roadmap design spec feature flag rollout canary migration schema'
).split(' ');
const KINDS = ['user_preference', 'user_fact', 'task_state', 'decision'];

/** Note `i`: a key and an ~80-byte value of a few words, as agents write them. */
function note(i) {
  const words = Array.from({ length: 6 }, () => pick(WORDS));
  return {
    key: `item${i}.${words[0]}`,
    value: { text: `${words.join(' ')} #${i}`, owner: pick(['priya', 'marco', 'lin', 'sam']) },
    kind: KINDS[i % KINDS.length],
  };
}
const notes = Array.from({ length: NOTES }, (_, i) => note(i));
/** Queries: one or two words (a word finds many notes), and a key fragment (an identifier). */
const queries = Array.from({ length: 256 }, (_, i) => {
  if (i % 3 === 0) return pick(WORDS);
  if (i % 3 === 1) return `${pick(WORDS)} ${pick(WORDS)}`;
  return `item${Math.floor(rand() * NOTES)}`;
});

/** Runs `op(i)` for i in [0, n) with `concurrency` in flight; returns ops/s and latencies (ms). */
async function run(n, concurrency, op) {
  let next = 0;
  const lat = [];
  const started = performance.now();
  async function worker() {
    while (next < n) {
      const i = next++;
      const t = performance.now();
      await op(i);
      lat.push(performance.now() - t);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { opsPerSec: n / ((performance.now() - started) / 1000), p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

// ---- Cairn -----------------------------------------------------------------------------------
async function cairn(dir) {
  const store = await Store.open(dir);
  const caller = { tenant: 'local', user: 'bench', scope: 'default', agent: 'bench' };
  const call = async (verb, body) => {
    const r = await store.notes(verb, caller, body);
    if (r.error !== undefined) throw new Error(`${verb}: ${JSON.stringify(r.error)}`);
    return r;
  };
  const t0 = performance.now();
  await run(NOTES, 32, (i) => call('note_write', { ...notes[i], expectedVersion: 0 }));
  const loadS = (performance.now() - t0) / 1000;
  /** One CAS update: read the current version, write with expectedVersion. */
  const cas = async (i) => {
    const n = notes[(i * 7919) % NOTES];
    const cur = await call('note_list', { key: n.key, limit: 1 });
    const version = cur.notes[0].version;
    await call('note_write', { key: n.key, value: { ...n.value, rev: version }, expectedVersion: version });
  };
  const casSerial = await run(CAS, 1, cas);
  const casParallel = await run(CAS, WRITERS, (i) => cas(i + CAS));
  let found = 0;
  const query = async (i) => {
    const r = await call('note_list', { query: queries[i % queries.length], limit: LIMIT });
    found += r.notes.length;
  };
  await run(200, 1, query); // warm-up
  found = 0;
  const querySerial = await run(QUERIES, 1, query);
  const queryParallel = await run(QUERIES, WRITERS, query);
  await store.close();
  return { loadS, casSerial, casParallel, querySerial, queryParallel, found };
}

// ---- OpenContinuity Lite profile, rebuilt on better-sqlite3 -------------------------------------
function lite(dir) {
  const db = new Database(join(dir, 'lite.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`
    CREATE TABLE memories_current (
      key TEXT PRIMARY KEY, value TEXT NOT NULL, kind TEXT NOT NULL, version INTEGER NOT NULL,
      agent TEXT NOT NULL, updated_at INTEGER NOT NULL);
    CREATE TABLE memory_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, version INTEGER NOT NULL, op TEXT NOT NULL,
      before TEXT, after TEXT NOT NULL, agent TEXT NOT NULL, at INTEGER NOT NULL);
    CREATE INDEX memory_events_key ON memory_events (key, version);
    CREATE VIRTUAL TABLE memories_fts USING fts5 (key, value, content='', tokenize='trigram');
  `);
  const get = db.prepare('SELECT rowid, value, version FROM memories_current WHERE key = ?');
  const insert = db.prepare(
    'INSERT INTO memories_current (key, value, kind, version, agent, updated_at) VALUES (?, ?, ?, 1, ?, ?)',
  );
  const update = db.prepare(
    'UPDATE memories_current SET value = ?, version = version + 1, updated_at = ? WHERE key = ? AND version = ?',
  );
  const event = db.prepare(
    'INSERT INTO memory_events (key, version, op, before, after, agent, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const ftsAdd = db.prepare('INSERT INTO memories_fts (rowid, key, value) VALUES (?, ?, ?)');
  const ftsDel = db.prepare("INSERT INTO memories_fts (memories_fts, rowid, key, value) VALUES ('delete', ?, ?, ?)");
  const search = db.prepare(
    `SELECT c.key, c.value, c.kind, c.version, bm25(memories_fts) AS score FROM memories_fts f
     JOIN memories_current c ON c.rowid = f.rowid WHERE memories_fts MATCH ? ORDER BY score LIMIT ?`,
  );
  const create = db.transaction((n, now) => {
    const value = JSON.stringify(n.value);
    const { lastInsertRowid } = insert.run(n.key, value, n.kind, 'bench', now);
    ftsAdd.run(lastInsertRowid, n.key, value);
    event.run(n.key, 1, 'create', null, value, 'bench', now);
  });
  const cas = db.transaction((key, value, expected, now) => {
    const cur = get.get(key);
    if (update.run(value, now, key, expected).changes !== 1) throw new Error('VERSION_CONFLICT');
    ftsDel.run(cur.rowid, key, cur.value);
    ftsAdd.run(cur.rowid, key, value);
    event.run(key, expected + 1, 'replace', cur.value, value, 'bench', now);
  });
  const t0 = performance.now();
  for (const n of notes) create(n, Date.now());
  const loadS = (performance.now() - t0) / 1000;
  const casOne = (i) => {
    const n = notes[(i * 7919) % NOTES];
    const version = get.get(n.key).version;
    cas(n.key, JSON.stringify({ ...n.value, rev: version }), version, Date.now());
  };
  const casSerial = awaitSync(() => CAS, casOne);
  const casParallel = awaitSync(
    () => CAS,
    (i) => casOne(i + CAS),
  );
  // FTS5 trigram: each query word as a quoted phrase (a substring), words OR-ed like Cairn's hybrid.
  const match = (q) =>
    q
      .split(/\s+/)
      .map((w) => `"${w.replaceAll('"', '""')}"`)
      .join(' OR ');
  let found = 0;
  const query = (i) => {
    found += search.all(match(queries[i % queries.length]), LIMIT).length;
  };
  for (let i = 0; i < 200; i++) query(i);
  found = 0;
  const querySerial = awaitSync(() => QUERIES, query);
  db.close();
  return { loadS, casSerial, casParallel, querySerial, queryParallel: querySerial, found };
}

/** better-sqlite3 is synchronous: N calls in a row, measured like `run` with one in flight. */
function awaitSync(n, op) {
  const count = n();
  const lat = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    op(i);
    lat.push(performance.now() - t);
  }
  return {
    opsPerSec: count / ((performance.now() - started) / 1000),
    p50: percentile(lat, 50),
    p99: percentile(lat, 99),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'cairn-notes-bench-'));
try {
  console.log(
    `notes bench: ${fmt(NOTES)} notes, ${fmt(CAS)} CAS writes per mode, ${fmt(QUERIES)} queries (limit ${LIMIT})`,
  );
  const c = await cairn(join(dir, 'cairn'));
  const l = lite(dir);
  const row = (label, a, b) => [
    label,
    `${fmt(a.opsPerSec)} /s`,
    `${fmt(b.opsPerSec)} /s`,
    `${fmt(a.p50, 3)} / ${fmt(b.p50, 3)} ms`,
  ];
  table(
    ['', 'Cairn', 'Lite (sqlite)', 'p50 Cairn / Lite'],
    [
      row('CAS write, one at a time', c.casSerial, l.casSerial),
      row(`CAS write, ${WRITERS} writers`, c.casParallel, l.casParallel),
      row('query, one at a time', c.querySerial, l.querySerial),
      row(`query, ${WRITERS} in flight`, c.queryParallel, l.queryParallel),
    ],
  );
  console.log('\n  Lite runs every mode one call at a time (better-sqlite3 is synchronous in one process).');
  console.log('  Queries: Cairn ranks its hybrid channels (BM25 + trigram share >= 50%, RRF) over every match;');
  console.log('  Lite ORs the words as FTS5 trigram substrings, ordered by bm25: the same text, looser work.');
  console.log(
    `\n  load: Cairn ${fmt(c.loadS, 2)} s (32 in flight), Lite ${fmt(l.loadS, 2)} s (one transaction a note)`,
  );
  console.log(`  results returned: Cairn ${fmt(c.found)}, Lite ${fmt(l.found)} (${fmt(QUERIES)} queries)`);
  const ratios = {
    casSerial: c.casSerial.opsPerSec / l.casSerial.opsPerSec,
    casParallel: c.casParallel.opsPerSec / l.casParallel.opsPerSec,
    querySerial: c.querySerial.opsPerSec / l.querySerial.opsPerSec,
    queryParallel: c.queryParallel.opsPerSec / l.queryParallel.opsPerSec,
  };
  console.log('\nCairn / Lite (throughput):');
  console.log(ratioLine('CAS writes, one at a time', ratios.casSerial, 2));
  console.log(ratioLine(`CAS writes, ${WRITERS} writers`, ratios.casParallel, 2));
  console.log(ratioLine('queries, one at a time', ratios.querySerial, 2));
  console.log(ratioLine(`queries, ${WRITERS} in flight`, ratios.queryParallel, 2));
  saveResults('notes', { notes: NOTES, cas: CAS, queries: QUERIES, writers: WRITERS, cairn: c, lite: l, ratios });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
