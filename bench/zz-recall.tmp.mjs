import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../dist/index.js';
import { generateGraph, rng } from './lib/graph-data.mjs';
const store = await Store.open(mkdtempSync(join(tmpdir(), 'rec-')));
const C = { tenant: 'local', user: 'default', scope: 'ref', agent: 'a' };
const { ents, rels } = generateGraph(10000, 20000, 9);
for (let i = 0; i < ents.length; i += 1000) await store.knowledge('remember', C, { facts: { entities: ents.slice(i, i + 1000), relations: [] } });
for (let i = 0; i < rels.length; i += 5000) await store.knowledge('remember', C, { facts: { entities: [], relations: rels.slice(i, i + 5000).map((r) => ({ source: ents[r.source].name, target: ents[r.target].name, type: r.type })) } });
const rand = rng(10000);
const names = Array.from({ length: 200 }, () => ents[Math.floor(rand() * ents.length)].name);
const N = Number(process.env.N ?? 5);
const c0 = process.cpuUsage(); const t0 = performance.now(); let bytes = 0;
for (let r = 0; r < N; r++) for (const s of names) { const x = await store.knowledge('recall', C, { subject: s }); bytes = JSON.stringify(x).length; }
const c = process.cpuUsage(c0);
console.log('recall', ((performance.now() - t0) * 1000 / (N * names.length)).toFixed(0), 'µs wall', ((c.user + c.system) / (N * names.length)).toFixed(0), 'µs cpu', bytes, 'bytes');
if (process.env.SHOW) console.log(JSON.stringify(await store.knowledge('recall', C, { subject: names[0] }), null, 1).slice(0, 3000));
await store.close();
