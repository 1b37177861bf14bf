// memory_status on a large scope, engine only (`Store.knowledge('status', …)` through dist/):
//   node bench/status.bench.mjs build <dir>    generates the graph (`generateGraph(E, 3E, 9)`) and
//                                              stores it with `remember` facts calls in batches of
//                                              1,000 entities / 5,000 relations (as node.bench's
//                                              loadGraph does); prints the ingest time
//   node bench/status.bench.mjs load <dir>     the same graph as an export file (as graph.bench's
//                                              cairnLoad writes it, before the clock), loaded with
//                                              one `Store.load`; prints the load time
//   node bench/status.bench.mjs status <dir>   opens the store, times the first status (it builds
//                                              the tally of a store written before it) and the
//                                              median of the next ones
// Size: CAIRN_BENCH_ENTITIES (default 100,000), relations 3× that; status runs CAIRN_BENCH_RUNS (7).
// Run the build of an older engine by pointing CAIRN_NATIVE_PATH at its addon.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Store } from '../dist/index.js';
import { generateGraph } from './lib/graph-data.mjs';

const ENTITIES = Number(process.env.CAIRN_BENCH_ENTITIES ?? 100_000);
const RUNS = Number(process.env.CAIRN_BENCH_RUNS ?? 7);
const CALLER = { tenant: 'local', user: 'bench', scope: 'graph', agent: 'bench' };
const [mode, dir] = process.argv.slice(2);

async function remember(store, body) {
  const reply = await store.knowledge('remember', CALLER, body);
  if (reply.error) throw new Error(`remember refused: ${JSON.stringify(reply.error)}`);
}

async function build() {
  const { ents, rels } = generateGraph(ENTITIES, ENTITIES * 3, 9);
  const store = await Store.open(dir);
  const t = performance.now();
  for (let i = 0; i < ents.length; i += 1000) {
    await remember(store, { facts: { entities: ents.slice(i, i + 1000), relations: [] } });
  }
  for (let i = 0; i < rels.length; i += 5000) {
    const relations = rels
      .slice(i, i + 5000)
      .map((r) => ({ source: ents[r.source].name, target: ents[r.target].name, type: r.type }));
    await remember(store, { facts: { entities: [], relations } });
  }
  console.log(
    `ingest ${ents.length} entities / ${rels.length} relations: ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  await store.close();
}

async function load() {
  const { ents, rels } = generateGraph(ENTITIES, ENTITIES * 3, 9);
  const store = await Store.open(dir);
  const file = join(dir, 'graph.jsonl');
  const at = new Date().toISOString();
  const lines = ents.map((e, i) => JSON.stringify({ kind: 'entity', id: String(i), name: e.name, types: [e.type] }));
  for (const [i, r] of rels.entries()) {
    const [from, to] = [ents[r.source].name, ents[r.target].name];
    const fact = { kind: 'fact', id: String(ENTITIES + i), from: String(r.source), to: String(r.target) };
    lines.push(JSON.stringify({ ...fact, from_name: from, to_name: to, type: r.type, recorded_at: at }));
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  const t = performance.now();
  const reply = await store.load(CALLER, readFileSync(file));
  if (reply.error || reply.skipped.length > 0) throw new Error(`load: ${JSON.stringify(reply).slice(0, 300)}`);
  console.log(
    `load ${ents.length} entities / ${rels.length} relations: ${((performance.now() - t) / 1000).toFixed(2)} s`,
  );
  await store.close();
}

async function status() {
  const store = await Store.open(dir);
  const once = async () => {
    const t = performance.now();
    const reply = await store.knowledge('status', CALLER, {});
    if (reply.error) throw new Error(JSON.stringify(reply.error));
    return { ms: performance.now() - t, reply };
  };
  const first = await once();
  const times = [];
  for (let i = 0; i < RUNS; i++) times.push((await once()).ms);
  times.sort((a, b) => a - b);
  const { scope, ontology } = first.reply;
  console.log(
    `status: first ${first.ms.toFixed(1)} ms, median of ${RUNS} ${times[Math.floor(RUNS / 2)].toFixed(2)} ms ` +
      `(min ${times[0].toFixed(2)}); scope ${JSON.stringify(scope)}; ${ontology.entity_types.length} entity types, ` +
      `${ontology.relation_types.length} relation types`,
  );
  await store.close();
}

if (mode === 'build') await build();
else if (mode === 'load') await load();
else if (mode === 'status') await status();
else throw new Error('usage: status.bench.mjs build|load|status <dir>');
