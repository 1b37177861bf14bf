// One fact revised again and again through `memory_relate` (`Store.knowledge('relate', …)` through
// dist/), engine only, printing the mean time of a relate call over the 50 calls before each of
// CAIRN_BENCH_MARKS (default 250,1000,2000) calls. Two shapes, each in a fresh store:
//   replaces    `Ann status Busy` / `Ann status Idle` alternately with `replaces: true`: each call
//               ends the live edge and restores the other (a restore keeps the earlier life as an
//               ended copy, another edge of the subject's type)
//   attributes  `Ann knows Bob` said again with a new attribute each call: each call revises the
//               fact (the version known before is kept, and the fact's list of attribute writes
//               grows by one)
// It measures whether a call's cost grows with the revisions before it; it asserts nothing.
// Run an older engine's build by pointing CAIRN_NATIVE_PATH at its addon.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Store } from '../dist/index.js';

const MARKS = (process.env.CAIRN_BENCH_MARKS ?? '250,1000,2000').split(',').map(Number);
const WINDOW = 50;
const CALLER = { tenant: 'local', user: 'bench', scope: 'revisions', agent: 'bench' };

const SHAPES = {
  replaces: (i) => ({ from: 'Ann', to: i % 2 === 0 ? 'Busy' : 'Idle', type: 'status', replaces: true }),
  attributes: (i) => ({ from: 'Ann', to: 'Bob', type: 'knows', attributes: { note: `revision ${i}` } }),
};

async function run(shape, body) {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-revisions-'));
  const store = await Store.open(dir);
  let start = 0;
  for (let i = 0; i < Math.max(...MARKS); i++) {
    if (MARKS.includes(i + WINDOW)) start = performance.now();
    const reply = await store.knowledge('relate', CALLER, body(i));
    if (reply.error) throw new Error(`relate refused: ${JSON.stringify(reply.error)}`);
    if (MARKS.includes(i + 1)) {
      const ms = (performance.now() - start) / WINDOW;
      console.log(`${shape.padEnd(10)} n=${String(i + 1).padStart(5)}  ${ms.toFixed(2)} ms/call`);
    }
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

for (const [shape, body] of Object.entries(SHAPES)) await run(shape, body);
