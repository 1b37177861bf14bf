import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '../dist/index.js';
import { generateGraph } from './lib/graph-data.mjs';
const file = '/tmp/exp-graph.jsonl';
if (!existsSync(file)) {
  const { ents, rels } = generateGraph(100000, 300000);
  const at = new Date().toISOString();
  const lines = ents.map((e, i) => JSON.stringify({ kind: 'entity', id: String(i), name: e.name, types: [e.type] }));
  for (const [i, r] of rels.entries()) lines.push(JSON.stringify({ kind: 'fact', id: String(100000 + i), from: String(r.source), to: String(r.target), from_name: ents[r.source].name, to_name: ents[r.target].name, type: r.type, recorded_at: at }));
  writeFileSync(file, lines.join('\n') + '\n');
  process.exit(0);
}
const store = await Store.open(mkdtempSync('/tmp/expl-'));
const t0 = performance.now();
const buf = readFileSync(file);
const t1 = performance.now();
const r = await store.load({ tenant: 'local', user: 'bench', scope: 'g', agent: 'bench' }, buf);
const t2 = performance.now();
await store.close();
const t3 = performance.now();
console.log(`read ${(t1 - t0).toFixed(0)} load ${(t2 - t1).toFixed(0)} close ${(t3 - t2).toFixed(0)} ms`, Object.keys(r));
