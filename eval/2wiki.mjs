// Retrieval quality on ../shared/eval/2wiki (see its README): ingest the 6,119 passages into a fresh
// store, ask each of the 51 questions through `context`, and score the top 8 distinct passages by
// document title: all-gold@8 (every gold title present) and gold recall@8, beside a BM25 baseline
// computed here over title + text (k1 1.2, b 0.75, English stop words), as the README describes.
// Ingest: every title is an entity (type `topic`); each passage is stored as its own document with
// the title as its source label, so linking makes every title that occurs in it a mention.
// Then the same for questions generated from the corpus (generated.mjs), which no tuning has
// seen. No LLM anywhere. `--verbose` prints each question's misses.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Store } from '../dist/index.js';
import { bm25Top } from './bm25.mjs';
import { generatedQuestions } from './generated.mjs';

// The set lives beside the checkout (../shared/eval/2wiki); CAIRN_EVAL_DIR points elsewhere.
const DATA = process.env.CAIRN_EVAL_DIR ?? fileURLToPath(new URL('../../shared/eval/2wiki/', import.meta.url));
if (!existsSync(join(DATA, 'corpus.json'))) {
  console.error(`eval: no 2Wiki set at ${DATA} (corpus.json, questions.json); set CAIRN_EVAL_DIR`);
  process.exit(2);
}
const corpus = JSON.parse(readFileSync(join(DATA, 'corpus.json'), 'utf8'));
const questions = JSON.parse(readFileSync(join(DATA, 'questions.json'), 'utf8'));
const CALLER = { tenant: 'local', user: 'eval', scope: '2wiki', agent: 'eval' };
const TOP = 8;
const verbose = process.argv.includes('--verbose');

async function call(store, verb, body) {
  const reply = await store.knowledge(verb, CALLER, body);
  if (reply.error) throw new Error(`${verb} refused: ${JSON.stringify(reply.error).slice(0, 500)}`);
  return reply;
}

async function ingest(store) {
  for (let i = 0; i < corpus.length; i += 1000) {
    const entities = corpus.slice(i, i + 1000).map((p) => ({ name: p.title, type: 'topic' }));
    await call(store, 'remember', { facts: { entities, relations: [] } });
  }
  let next = 0;
  async function worker() {
    while (next < corpus.length) {
      const p = corpus[next++];
      await call(store, 'remember', { content: p.text, source: p.title });
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** The first `TOP` distinct document titles among the passage items of a context reply. */
function topTitles(reply) {
  const titles = [];
  for (const item of reply.items) {
    const title = item.citation?.source?.name ?? item.source;
    if (item.kind !== 'passage' || !title || titles.includes(title)) continue;
    titles.push(title);
    if (titles.length === TOP) break;
  }
  return titles;
}

function score(runs) {
  let allGold = 0;
  let recall = 0;
  for (const { gold, got } of runs) {
    const found = gold.filter((g) => got.includes(g)).length;
    if (found === gold.length) allGold++;
    recall += found / gold.length;
  }
  return { allGold: allGold / runs.length, recall: recall / runs.length };
}

/** Asks each question through `context`; each one's gold and top titles, Cairn's and BM25's. */
async function ask(store, qs) {
  const cairnRuns = [];
  const baseRuns = [];
  const latencies = [];
  for (const q of qs) {
    const started = performance.now();
    const reply = await call(store, 'context', { question: q.question, k: 40 });
    latencies.push(performance.now() - started);
    const got = topTitles(reply);
    cairnRuns.push({ gold: q.gold_titles, got });
    baseRuns.push({ gold: q.gold_titles, got: bm25Top(corpus, q.question, TOP) });
    if (verbose) {
      const missing = q.gold_titles.filter((g) => !got.includes(g));
      if (missing.length) console.log(`MISS ${q.question}\n  missing ${missing.join(' | ')}\n  got ${got.join(' | ')}`);
    }
  }
  return { cairn: score(cairnRuns), base: score(baseRuns), latencies };
}

function report(title, { cairn, base }) {
  console.log(`${title}\n                  all-gold@${TOP}   gold recall@${TOP}`);
  console.log(`cairn context       ${cairn.allGold.toFixed(3)}          ${cairn.recall.toFixed(3)}`);
  console.log(`BM25 baseline       ${base.allGold.toFixed(3)}          ${base.recall.toFixed(3)}`);
}

const dir = mkdtempSync(join(tmpdir(), 'cairn-eval-'));
try {
  const store = await Store.open(dir);
  const t = performance.now();
  await ingest(store);
  const ingestSeconds = (performance.now() - t) / 1000;
  const set = await ask(store, questions);
  const generated = generatedQuestions(corpus, questions);
  const made = await ask(store, generated);
  await store.close();
  console.log(`2wiki: ${corpus.length} passages ingested in ${ingestSeconds.toFixed(1)} s`);
  report(`the set's ${questions.length} questions`, set);
  report(
    `${generated.length} questions generated from the corpus (eval/generated.mjs), a check of generalisation`,
    made,
  );
  const latencies = [...set.latencies, ...made.latencies].sort((a, b) => a - b);
  console.log(`context latency p50 ${latencies[Math.floor(latencies.length / 2)].toFixed(1)} ms`);
  console.log(`target all-gold@${TOP} >= 0.80 on the set: ${set.cairn.allGold >= 0.8 ? 'meets' : 'MISSES'}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
