// Memory and latency of ingest as the index grows (DESIGN.md §5: memory is set by config, not by
// data size). `remember` calls of 500 passages (4 in flight, as text.bench.mjs), each passage
// made unique so the index keeps growing; after every 10k passages it prints the slowest call of
// those 10k and the process's RSS (after a GC when run with --expose-gc). A merge of the full-text
// index that ran in one transaction showed as one slow call and a jump of RSS at each new level.
// Summary: the slowest call over the run ÷ the median call, and RSS growth after the first 50k.
// Size: CAIRN_BENCH_PASSAGES (default 140,000: past the first level-2 merge at 128k).
// Run: `node --expose-gc bench/ingest-memory.bench.mjs` (not in `npm run bench`: ~1–2 minutes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Store } from '../dist/index.js';
import { fmt, percentile, saveResults, table } from './lib/report.mjs';
import { generateText } from './lib/text-data.mjs';

const PASSAGES = Number(process.env.CAIRN_BENCH_PASSAGES ?? 140_000);
const ROUND = 10_000;
const BATCH = 500;
const CALLER = { tenant: 'local', user: 'bench', scope: 'text', agent: 'bench' };

const { passages } = generateText(ROUND, 10);
const rssMb = () => process.memoryUsage().rss / 1e6;

const root = mkdtempSync(join(tmpdir(), 'cairn-ingest-memory-'));
console.log(`ingest memory bench: ${fmt(PASSAGES)} passages, ${BATCH} a call, in ${root}`);
try {
  const store = await Store.open(root);
  const calls = [];
  const rounds = [];
  const cpu = process.cpuUsage();
  for (let round = 0; round * ROUND < PASSAGES; round++) {
    let next = 0;
    let maxMs = 0;
    async function worker() {
      while (next < ROUND) {
        const start = next;
        next += BATCH;
        const body = {
          passages: passages
            .slice(start, start + BATCH)
            .map((text, j) => ({ text: `${text} r${round}x${start + j}`, mentions: [] })),
        };
        const t = performance.now();
        const reply = await store.knowledge('remember', CALLER, body);
        if (reply.error) throw new Error(`remember refused: ${JSON.stringify(reply.error)}`);
        const ms = performance.now() - t;
        calls.push(ms);
        maxMs = Math.max(maxMs, ms);
      }
    }
    await Promise.all(Array.from({ length: 4 }, worker));
    global.gc?.();
    rounds.push({ passages: (round + 1) * ROUND, maxCallMs: maxMs, rssMb: rssMb() });
  }
  const cpuUs = process.cpuUsage(cpu);
  await store.close();
  table(
    ['passages', 'max call (ms)', 'RSS (MB)'],
    rounds.map((r) => [fmt(r.passages), fmt(r.maxCallMs), fmt(r.rssMb)]),
  );
  const median = percentile(calls, 50);
  const maxCallMs = Math.max(...calls);
  const at50k = rounds.find((r) => r.passages >= 50_000) ?? rounds[rounds.length - 1];
  const summary = {
    medianCallMs: median,
    maxCallMs,
    maxOverMedian: maxCallMs / median,
    rssAt50kMb: at50k.rssMb,
    rssMaxAfter50kMb: Math.max(...rounds.filter((r) => r.passages >= at50k.passages).map((r) => r.rssMb)),
    cpuUsPerPassage: (cpuUs.user + cpuUs.system) / rounds.length / ROUND,
  };
  summary.rssGrowthAfter50kMb = summary.rssMaxAfter50kMb - summary.rssAt50kMb;
  console.log(
    `\nmax call ${fmt(maxCallMs)} ms ÷ median ${fmt(median, 1)} ms = ${summary.maxOverMedian.toFixed(1)}×; ` +
      `RSS growth after 50k ${fmt(summary.rssGrowthAfter50kMb)} MB (${fmt(summary.rssAt50kMb)} → ` +
      `${fmt(summary.rssMaxAfter50kMb)} at most); CPU ${fmt(summary.cpuUsPerPassage, 1)} µs a passage`,
  );
  saveResults('ingest-memory', { passages: rounds.length * ROUND, batch: BATCH, rounds, summary });
} finally {
  rmSync(root, { recursive: true, force: true });
}
