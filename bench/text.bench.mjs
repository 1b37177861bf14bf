// Cairn's passages and full-text index against better-sqlite3 12 with FTS5, same text, one run:
//   ingest   Cairn: `remember` with `passages` (500 a call, 4 calls in flight), each durable;
//            SQLite: FTS5 (porter unicode61) in WAL with synchronous=FULL, 500 rows a transaction.
//   query    p50/p95 of 2–3 word queries, top 8: Cairn `context` (hops 0: full-text channel, fusion,
//            grounding, cited passages); SQLite `MATCH … ORDER BY rank LIMIT 8` (OR of the words).
// Size: CAIRN_BENCH_PASSAGES (default 100,000); queries CAIRN_BENCH_QUERIES (1,000).
// Beside wall time, each ingest's CPU time (user + system, every thread of this process, from
// process.cpuUsage) per passage: on a shared machine it says what each side costs when wall time
// says mostly how busy the machine was.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { Store } from '../dist/index.js';
import { fmt, percentile, ratioLine, saveResults, table } from './lib/report.mjs';
import { generateText } from './lib/text-data.mjs';

const PASSAGES = Number(process.env.CAIRN_BENCH_PASSAGES ?? 100_000);
const QUERIES = Number(process.env.CAIRN_BENCH_QUERIES ?? 1_000);
const BATCH = 500;
const CALLER = { tenant: 'local', user: 'bench', scope: 'text', agent: 'bench' };

const { passages, queries } = generateText(PASSAGES, QUERIES);

async function timeQueries(run) {
  for (const q of queries.slice(0, 20)) await run(q);
  const samples = [];
  let hits = 0;
  for (const q of queries) {
    const t = performance.now();
    hits += await run(q);
    samples.push(performance.now() - t);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), meanHits: hits / queries.length };
}

async function cairn(dir) {
  const store = await Store.open(dir);
  const cpu = process.cpuUsage();
  const t = performance.now();
  let next = 0;
  async function worker() {
    while (next < PASSAGES) {
      const start = next;
      next += BATCH;
      const body = { passages: passages.slice(start, start + BATCH).map((text) => ({ text, mentions: [] })) };
      const reply = await store.knowledge('remember', CALLER, body);
      if (reply.error) throw new Error(`remember refused: ${JSON.stringify(reply.error)}`);
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker));
  const ingestSeconds = (performance.now() - t) / 1000;
  const ingestCpuSeconds = cpuSeconds(process.cpuUsage(cpu));
  const query = await timeQueries(async (question) => {
    const reply = await store.knowledge('context', CALLER, { question, hops: 0, k: 8 });
    if (reply.error) throw new Error(`context refused: ${JSON.stringify(reply.error)}`);
    return reply.items.length;
  });
  const check = await store.check();
  await store.close();
  return { ingestSeconds, ingestCpuSeconds, query, checkOk: check.ok };
}

/** Seconds of CPU in a `process.cpuUsage` difference (microseconds of user and system time). */
function cpuSeconds({ user, system }) {
  return (user + system) / 1e6;
}

function sqlite(dir) {
  const db = new Database(join(dir, 'fts.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec("CREATE VIRTUAL TABLE p USING fts5(text, tokenize = 'porter unicode61')");
  const insert = db.prepare('INSERT INTO p (text) VALUES (?)');
  const many = db.transaction((rows) => {
    for (const r of rows) insert.run(r);
  });
  const cpu = process.cpuUsage();
  const t = performance.now();
  for (let i = 0; i < PASSAGES; i += BATCH) many(passages.slice(i, i + BATCH));
  const ingestSeconds = (performance.now() - t) / 1000;
  const ingestCpuSeconds = cpuSeconds(process.cpuUsage(cpu));
  const search = db.prepare('SELECT rowid, rank FROM p WHERE p MATCH ? ORDER BY rank LIMIT 8');
  return timeQueries(
    async (q) =>
      search.all(
        q
          .split(' ')
          .map((w) => `"${w}"`)
          .join(' OR '),
      ).length,
  ).then((query) => {
    db.close();
    return { ingestSeconds, ingestCpuSeconds, query };
  });
}

const root = mkdtempSync(join(tmpdir(), 'cairn-text-bench-'));
for (const d of ['cairn', 'sqlite']) mkdirSync(join(root, d));
console.log(`text bench: ${fmt(PASSAGES)} passages (100–200 words), ${fmt(QUERIES)} queries, in ${root}`);
try {
  console.log('better-sqlite3 FTS5 …');
  const s = await sqlite(join(root, 'sqlite'));
  console.log('cairn …');
  const c = await cairn(join(root, 'cairn'));
  table(
    ['', 'cairn', 'sqlite fts5'],
    [
      ['ingest (passages/s)', fmt(PASSAGES / c.ingestSeconds), fmt(PASSAGES / s.ingestSeconds)],
      [
        'ingest CPU (µs a passage, all threads)',
        fmt((c.ingestCpuSeconds * 1e6) / PASSAGES, 1),
        fmt((s.ingestCpuSeconds * 1e6) / PASSAGES, 1),
      ],
      [
        'query p50 / p95 (ms)',
        `${fmt(c.query.p50, 3)} / ${fmt(c.query.p95, 3)}`,
        `${fmt(s.query.p50, 3)} / ${fmt(s.query.p95, 3)}`,
      ],
      ['mean hits', fmt(c.query.meanHits, 1), fmt(s.query.meanHits, 1)],
    ],
  );
  const ratios = {
    ingestCairnOverSqlite: s.ingestSeconds / c.ingestSeconds,
    queryP50CairnOverSqlite: c.query.p50 / s.query.p50,
  };
  console.log('\nratios');
  console.log(ratioLine('ingest cairn / fts5', ratios.ingestCairnOverSqlite, 3));
  console.log(ratioLine('query p50 cairn / fts5', ratios.queryP50CairnOverSqlite, 1, false));
  console.log(`cairn check: ${c.checkOk ? 'ok' : 'PROBLEMS'}`);
  saveResults('text', { passages: PASSAGES, queries: QUERIES, cairn: c, sqlite: s, ratios });
  if (!c.checkOk) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
