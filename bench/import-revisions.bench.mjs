// Export and import of one fact or entity revised N times, engine only (`Store.knowledge` through
// dist/): for each N in CAIRN_BENCH_NS (default 2000,20000) and each shape, writes the history
// into a fresh scope, exports it in pages (`maxBytes` CAIRN_BENCH_MAXBYTES, default 64 KiB), and
// imports the pages in order into an empty scope, printing the total import time and the mean
// time of a page over the first and the last tenth of the pages. Shapes:
//   attributes  `Ann knows Bob` said again with a new attribute each call (a version kept each time)
//   replaces    `Ann status Busy` / `Ann status Idle` alternately with `replaces: true`
//   entity      entity Ann remembered again with a new attribute value each call
// It measures whether a page's cost grows with the pages before it; it asserts nothing.
// Run an older engine's build by pointing CAIRN_NATIVE_PATH at its addon.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Store } from '../dist/index.js';

const NS = (process.env.CAIRN_BENCH_NS ?? '2000,20000').split(',').map(Number);
const SHAPES_ASKED = (process.env.CAIRN_BENCH_SHAPES ?? 'attributes,replaces,entity').split(',');
const MAX_BYTES = Number(process.env.CAIRN_BENCH_MAXBYTES ?? 65536);
const who = (scope) => ({ tenant: 'local', user: 'bench', scope, agent: 'bench' });

const SHAPES = {
  attributes: (i) => ['relate', { from: 'Ann', to: 'Bob', type: 'knows', attributes: { note: `revision ${i}` } }],
  replaces: (i) => ['relate', { from: 'Ann', to: i % 2 === 0 ? 'Busy' : 'Idle', type: 'status', replaces: true }],
  entity: (i) => [
    'remember',
    { facts: { entities: [{ name: 'Ann', type: 'person', attributes: { mood: `m${i}` } }] } },
  ],
};

async function call(store, verb, caller, body) {
  const reply = await store.knowledge(verb, caller, body);
  if (reply.error) throw new Error(`${verb} refused: ${JSON.stringify(reply.error)}`);
  return reply;
}

async function run(shape, n) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-import-revisions-'));
  const store = await Store.open(dir);
  // Written in the past, a minute apart, so the import's stamps are not ahead of its clock.
  const t0 = Date.now() - (n + 10) * 60_000;
  for (let i = 0; i < n; i++) {
    const [verb, body] = SHAPES[shape](i);
    await call(store, verb, { ...who('source'), now: t0 + i * 60_000 }, body);
  }
  const pages = [];
  let cursor = null;
  do {
    const body = { maxBytes: MAX_BYTES, ...(cursor === null ? {} : { cursor }) };
    const page = await call(store, 'export', who('source'), body);
    pages.push(page.records);
    cursor = page.next;
  } while (cursor !== null);
  const times = [];
  const start = performance.now();
  for (const records of pages) {
    const t = performance.now();
    const reply = await call(store, 'import', who('copy'), { records });
    if (reply.skipped.length > 0) throw new Error(`skipped: ${JSON.stringify(reply.skipped[0])}`);
    times.push(performance.now() - t);
  }
  const total = performance.now() - start;
  const tenth = Math.max(1, Math.floor(times.length / 10));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const records = pages.reduce((a, p) => a + p.length, 0);
  console.log(
    `${shape.padEnd(10)} n=${String(n).padStart(6)}  ${records} records in ${pages.length} pages  ` +
      `import ${total.toFixed(0)} ms  first tenth ${mean(times.slice(0, tenth)).toFixed(2)} ms/page  ` +
      `last tenth ${mean(times.slice(-tenth)).toFixed(2)} ms/page`,
  );
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const n of NS) for (const shape of SHAPES_ASKED) await run(shape, n);
