// Cairn's knowledge graph against Kuzu 0.11.3 on the same generated graph, in one run:
//   bulk ingest      Cairn: `Store.load` of the graph as an export file (JSON lines: entity and
//                    fact records), read from disk inside the clock; Kuzu: `COPY FROM` CSV. Both
//                    files are written once, by this process, before any load. Each load runs in a
//                    fresh process of its own (this script with `--bulk`) that makes no graph and
//                    only loads: run in one process, whichever loaded second was 0.5-0.65 s slower,
//                    in the heap, threads and memory the first left; and a child that generated
//                    and wrote the graph itself loaded with that garbage on its heap (a Cairn load
//                    measured 2.0-2.8 s there, 1.5-2.0 s in a process that only loads).
//                    CAIRN_BENCH_BULK_ROUNDS (default 3) loads a side, the sides alternating; the
//                    median of each is compared (single loads here varied by 30% run to run).
//                    Also timed, not compared: Cairn's `remember` facts calls at the per-call
//                    limits, 4 in flight.
//   transactional    batches of 1,000 entities, then of 1,000 relations, one durable commit each,
//                    sequential, in both (Kuzu: BEGIN … UNWIND … COMMIT).
//   1-hop / 2-hop    neighbourhood of a random entity by name, p50/p95 over many queries:
//                    Cairn `recall` (hops 1 and 2); Kuzu MATCH (a {name})-[*1..n]-(b).
// Size: CAIRN_BENCH_ENTITIES (default 100,000), relations 3× that; queries CAIRN_BENCH_QUERIES (2,000).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import kuzu from 'kuzu';

import { Store } from '../dist/index.js';
import { generateGraph, rng } from './lib/graph-data.mjs';
import { fmt, percentile, ratioLine, saveResults, table } from './lib/report.mjs';

const ENTITIES = Number(process.env.CAIRN_BENCH_ENTITIES ?? 100_000);
const RELATIONS = ENTITIES * 3;
const QUERIES = Number(process.env.CAIRN_BENCH_QUERIES ?? 2_000);
const BULK_ROUNDS = Number(process.env.CAIRN_BENCH_BULK_ROUNDS ?? 3);
const TX_BATCH = 1_000;
const CALLER = { tenant: 'local', user: 'bench', scope: 'graph', agent: 'bench' };

/** A `--bulk` child only loads the files its parent wrote: it makes no graph of its own. */
const BULK_CHILD = process.argv[2] === '--bulk';
const { ents, rels } = BULK_CHILD ? { ents: [], rels: [] } : generateGraph(ENTITIES, RELATIONS);
const relFacts = (slice) =>
  slice.map((r) => ({ source: ents[r.source].name, target: ents[r.target].name, type: r.type }));

async function remember(store, body) {
  const reply = await store.knowledge('remember', CALLER, body);
  if (reply.error) throw new Error(`remember refused: ${JSON.stringify(reply.error)}`);
  return reply;
}

/** Runs `jobs` (thunks) with at most `n` in flight. */
async function pool(jobs, n) {
  let next = 0;
  async function worker() {
    while (next < jobs.length) await jobs[next++]();
  }
  await Promise.all(Array.from({ length: n }, worker));
}

function seconds(start) {
  return (performance.now() - start) / 1000;
}

async function timeQueries(run) {
  const rand = rng(7);
  const names = Array.from({ length: QUERIES }, () => ents[Math.floor(rand() * ENTITIES)].name);
  for (const n of names.slice(0, 50)) await run(n); // warm the caches both engines keep
  const samples = [];
  let sizes = 0;
  for (const n of names) {
    const t = performance.now();
    sizes += await run(n);
    samples.push(performance.now() - t);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), meanResults: sizes / names.length };
}

/** The bulk loads' input files in `dir`: Cairn's export file and Kuzu's two CSV files. */
const bulkFiles = (dir) => ({
  cairn: join(dir, 'graph.jsonl'),
  entities: join(dir, 'entities.csv'),
  relations: join(dir, 'relations.csv'),
});

/** Writes the bulk loads' input files into `dir`, once, in the parent process. */
function writeBulkFiles(dir) {
  const files = bulkFiles(dir);
  const at = new Date().toISOString();
  const lines = ents.map((e, i) => JSON.stringify({ kind: 'entity', id: String(i), name: e.name, types: [e.type] }));
  for (const [i, r] of rels.entries()) {
    lines.push(
      JSON.stringify({
        kind: 'fact',
        id: String(ENTITIES + i),
        from: String(r.source),
        to: String(r.target),
        from_name: ents[r.source].name,
        to_name: ents[r.target].name,
        type: r.type,
        recorded_at: at,
      }),
    );
  }
  writeFileSync(files.cairn, `${lines.join('\n')}\n`);
  const csv = (s) => `"${s.replaceAll('"', '""')}"`;
  writeFileSync(files.entities, `name,type\n${ents.map((e) => `${csv(e.name)},${e.type}`).join('\n')}\n`);
  writeFileSync(
    files.relations,
    `from,to,type\n${rels.map((r) => `${csv(ents[r.source].name)},${csv(ents[r.target].name)},${r.type}`).join('\n')}\n`,
  );
}

/** Cairn's bulk loader: the graph as an export file (`input`, written before), loaded in one call. */
async function cairnLoad(dir, input) {
  const store = await Store.open(join(dir, 'store'));
  const t = performance.now();
  const reply = await store.load(CALLER, readFileSync(bulkFiles(input).cairn));
  const s = seconds(t);
  if (reply.error || reply.skipped.length > 0) throw new Error(`load: ${JSON.stringify(reply).slice(0, 300)}`);
  return { store, seconds: s };
}

/** Cairn's batch write path: `remember` calls at the per-call limits, 4 in flight. */
async function cairnBulk(dir) {
  const store = await Store.open(dir);
  const t = performance.now();
  const jobs = [];
  for (let i = 0; i < ENTITIES; i += 1000) {
    const entities = ents.slice(i, i + 1000).map((e) => ({ name: e.name, type: e.type }));
    jobs.push(() => remember(store, { facts: { entities, relations: [] } }));
  }
  await pool(jobs, 4);
  const rjobs = [];
  for (let i = 0; i < RELATIONS; i += 5000) {
    rjobs.push(() => remember(store, { facts: { entities: [], relations: relFacts(rels.slice(i, i + 5000)) } }));
  }
  await pool(rjobs, 4);
  return { store, seconds: seconds(t) };
}

async function cairnTransactional(dir) {
  const store = await Store.open(dir);
  const t = performance.now();
  for (let i = 0; i < ENTITIES; i += TX_BATCH) {
    const entities = ents.slice(i, i + TX_BATCH).map((e) => ({ name: e.name, type: e.type }));
    await remember(store, { facts: { entities, relations: [] } });
  }
  for (let i = 0; i < RELATIONS; i += TX_BATCH) {
    await remember(store, { facts: { entities: [], relations: relFacts(rels.slice(i, i + TX_BATCH)) } });
  }
  const s = seconds(t);
  await store.close();
  return s;
}

async function cairnHops(store, hops) {
  return timeQueries(async (name) => {
    const reply = await store.knowledge('recall', CALLER, { subject: name, hops, k: 1000 });
    if (reply.state !== 'answered') throw new Error(`recall of ${name}: ${JSON.stringify(reply).slice(0, 300)}`);
    return reply.facts.length;
  });
}

/** Runs one Kuzu statement and frees its result at once: a result freed by the garbage
 * collector after its database closed crashes the process (seen with kuzu 0.11.3). */
async function kz(conn, query, params) {
  const result = params === undefined ? await conn.query(query) : await conn.execute(query, params);
  result.close();
}

/** Opens the Kuzu database in `dir`, creating its tables when `create`. */
async function kuzuOpen(dir, create) {
  const db = new kuzu.Database(join(dir, 'db'));
  const conn = new kuzu.Connection(db);
  if (create) {
    await kz(conn, 'CREATE NODE TABLE Entity(name STRING, type STRING, PRIMARY KEY(name))');
    await kz(conn, 'CREATE REL TABLE Rel(FROM Entity TO Entity, type STRING)');
  }
  return { db, conn };
}

/** Kuzu's bulk loader: `COPY FROM` the CSV files in `input` (written before). */
async function kuzuBulk(dir, input) {
  const { entities: eFile, relations: rFile } = bulkFiles(input);
  const k = await kuzuOpen(dir, true);
  const t = performance.now();
  await kz(k.conn, `COPY Entity FROM '${eFile}' (HEADER=true)`);
  await kz(k.conn, `COPY Rel FROM '${rFile}' (HEADER=true)`);
  return { ...k, seconds: seconds(t) };
}

async function kuzuTransactional(dir) {
  const k = await kuzuOpen(dir, true);
  const insE = await k.conn.prepare('UNWIND $rows AS r CREATE (:Entity {name: r.name, type: r.type})');
  // One MATCH … CREATE per relation: Kuzu resolves each endpoint through its primary-key index,
  // whereas an UNWIND of 1,000 rows with two MATCHes measured about 100x slower here.
  const insR = await k.conn.prepare(
    'MATCH (a:Entity {name: $s}), (b:Entity {name: $t}) CREATE (a)-[:Rel {type: $ty}]->(b)',
  );
  const t = performance.now();
  for (let i = 0; i < ENTITIES; i += TX_BATCH) {
    await kz(k.conn, 'BEGIN TRANSACTION');
    await kz(k.conn, insE, { rows: ents.slice(i, i + TX_BATCH) });
    await kz(k.conn, 'COMMIT');
  }
  for (let i = 0; i < RELATIONS; i += TX_BATCH) {
    const rows = rels
      .slice(i, i + TX_BATCH)
      .map((r) => ({ s: ents[r.source].name, t: ents[r.target].name, ty: r.type }));
    await kz(k.conn, 'BEGIN TRANSACTION');
    for (const row of rows) await kz(k.conn, insR, row);
    await kz(k.conn, 'COMMIT');
  }
  const s = seconds(t);
  await k.conn.close();
  await k.db.close();
  return s;
}

async function kuzuHops(conn, hops) {
  const q = await conn.prepare(`MATCH (a:Entity {name: $n})-[:Rel*1..${hops}]-(b:Entity) RETURN DISTINCT b.name`);
  return timeQueries(async (name) => {
    const res = await conn.execute(q, { n: name });
    const rows = await res.getAll();
    res.close();
    return rows.length;
  });
}

/** The `--bulk` child: one side's bulk load into `dir` from the files in `input`; its seconds. */
async function bulkChild(side, dir, input) {
  if (side === 'kuzu') {
    const kb = await kuzuBulk(dir, input);
    await kb.conn.close();
    await kb.db.close();
    return kb.seconds;
  }
  const cl = await cairnLoad(dir, input);
  await cl.store.close();
  return cl.seconds;
}

/** Runs one side's bulk load into `dir` from the files in `input` in a fresh process; its seconds. */
function bulkInFreshProcess(side, dir, input) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--bulk', side, dir, input], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  return JSON.parse(out.toString()).seconds;
}

if (BULK_CHILD) {
  const seconds = await bulkChild(process.argv[3], process.argv[4], process.argv[5]);
  process.stdout.write(JSON.stringify({ seconds }));
  process.exit(0);
}

/** Both sides' bulk loads, alternating, each into a fresh directory under `root`; each side's
 * median seconds, every round's seconds, and the directory of its last load. */
function bulkRounds(root) {
  const rounds = { kuzu: [], cairn: [] };
  const dirs = {};
  writeBulkFiles(root);
  for (let i = 0; i < BULK_ROUNDS; i++) {
    for (const side of ['kuzu', 'cairn']) {
      const dir = join(root, `${side}-bulk-${i}`);
      mkdirSync(dir);
      rounds[side].push(bulkInFreshProcess(side, dir, root));
      if (dirs[side]) rmSync(dirs[side], { recursive: true, force: true });
      dirs[side] = dir;
    }
  }
  const median = (xs) => percentile(xs, 50);
  return { kuzu: median(rounds.kuzu), cairn: median(rounds.cairn), rounds, dirs };
}

const root = mkdtempSync(join(tmpdir(), 'cairn-graph-bench-'));
for (const d of ['cairn-bulk', 'cairn-tx', 'kuzu-tx']) mkdirSync(join(root, d));
console.log(`graph bench: ${fmt(ENTITIES)} entities, ${fmt(RELATIONS)} relations, ${fmt(QUERIES)} queries, in ${root}`);
try {
  console.log(`bulk loads: Kuzu COPY FROM and Cairn load, ${BULK_ROUNDS} each, alternating, each in a fresh process …`);
  const bulk = bulkRounds(root);
  for (const side of ['kuzu', 'cairn'])
    console.log(`  ${side}: ${bulk.rounds[side].map((x) => fmt(x, 2)).join(', ')} s`);
  const kb = { seconds: bulk.kuzu, ...(await kuzuOpen(bulk.dirs.kuzu, false)) };
  console.log('kuzu 1-hop, 2-hop …');
  const k1 = await kuzuHops(kb.conn, 1);
  const k2 = await kuzuHops(kb.conn, 2);
  await kb.conn.close();
  await kb.db.close();
  const cl = { seconds: bulk.cairn, store: await Store.open(join(bulk.dirs.cairn, 'store')) };
  console.log('cairn 1-hop, 2-hop …');
  const c1 = await cairnHops(cl.store, 1);
  const c2 = await cairnHops(cl.store, 2);
  const check = await cl.store.check();
  // Forgetting the whole scope: memory held by configuration, not by the scope's size (RSS only
  // grows: freed memory stays with the allocator, so the growth is the forget's peak).
  console.log('cairn forget {all} of the loaded scope …');
  const rssBefore = process.memoryUsage().rss;
  const forgetStart = performance.now();
  const forgot = await cl.store.knowledge('forget', CALLER, { all: true });
  const forget = { seconds: seconds(forgetStart), rssGrowthMb: (process.memoryUsage().rss - rssBefore) / 2 ** 20 };
  if (forgot.state !== 'forgotten') throw new Error(`forget: ${JSON.stringify(forgot).slice(0, 300)}`);
  const checkAfterForget = await cl.store.check();
  await cl.store.close();
  console.log('cairn remember calls …');
  const cb = await cairnBulk(join(root, 'cairn-bulk'));
  await cb.store.close();
  console.log('kuzu transactional …');
  const kt = await kuzuTransactional(join(root, 'kuzu-tx'));
  console.log('cairn transactional …');
  const ct = await cairnTransactional(join(root, 'cairn-tx'));

  const items = ENTITIES + RELATIONS;
  table(
    ['', 'cairn', 'kuzu 0.11.3'],
    [
      ['bulk ingest (items/s)', fmt(items / cl.seconds), fmt(items / kb.seconds)],
      ['remember calls, 4 in flight (items/s)', fmt(items / cb.seconds), '—'],
      ['transactional ingest (items/s)', fmt(items / ct), fmt(items / kt)],
      ['1-hop p50 / p95 (ms)', `${fmt(c1.p50, 3)} / ${fmt(c1.p95, 3)}`, `${fmt(k1.p50, 3)} / ${fmt(k1.p95, 3)}`],
      ['2-hop p50 / p95 (ms)', `${fmt(c2.p50, 3)} / ${fmt(c2.p95, 3)}`, `${fmt(k2.p50, 3)} / ${fmt(k2.p95, 3)}`],
      [
        'mean results 1-hop / 2-hop',
        `${fmt(c1.meanResults, 1)} / ${fmt(c2.meanResults, 1)}`,
        `${fmt(k1.meanResults, 1)} / ${fmt(k2.meanResults, 1)}`,
      ],
    ],
  );
  const ratios = {
    bulkCairnOverKuzu: kb.seconds / cl.seconds,
    transactionalCairnOverKuzu: kt / ct,
    twoHopP50CairnOverKuzu: c2.p50 / k2.p50,
    oneHopP50CairnOverKuzu: c1.p50 / k1.p50,
  };
  console.log('\nratios (speed: higher is better for Cairn; latency: lower is better)');
  console.log(ratioLine('bulk ingest cairn load / kuzu COPY', ratios.bulkCairnOverKuzu, 1));
  console.log(ratioLine('transactional ingest cairn / kuzu', ratios.transactionalCairnOverKuzu, 5));
  console.log(ratioLine('2-hop p50 cairn / kuzu', ratios.twoHopP50CairnOverKuzu, 0.5, false));
  console.log(ratioLine('1-hop p50 cairn / kuzu (no target)', ratios.oneHopP50CairnOverKuzu, 1, false));
  console.log(`cairn forget {all}: ${fmt(forget.seconds, 2)} s, RSS +${fmt(forget.rssGrowthMb, 0)} MB (no target)`);
  console.log(
    `cairn check: ${check.ok && checkAfterForget.ok ? 'ok' : 'PROBLEMS'} (after the load and after the forget)`,
  );
  saveResults('graph', {
    entities: ENTITIES,
    relations: RELATIONS,
    queries: QUERIES,
    bulkRounds: bulk.rounds,
    cairn: {
      bulkSeconds: cl.seconds,
      rememberSeconds: cb.seconds,
      transactionalSeconds: ct,
      oneHop: c1,
      twoHop: c2,
      forget,
    },
    kuzu: { bulkSeconds: kb.seconds, transactionalSeconds: kt, oneHop: k1, twoHop: k2 },
    ratios,
    cairnCheckOk: check.ok && checkAfterForget.ok,
  });
  if (!check.ok || !checkAfterForget.ok) process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
