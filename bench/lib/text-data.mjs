// Deterministic generated passages for the text bench: words drawn from the unigram distribution of
// the 2Wiki corpus in ../shared/eval (real English words, so stemming and stop words behave as they
// do on real text), 100–200 words a passage; queries of 2–3 mid-frequency words.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { rng } from './graph-data.mjs';

// The 2Wiki corpus beside the checkout (../shared/eval/2wiki), or CAIRN_EVAL_DIR.
const CORPUS = join(
  process.env.CAIRN_EVAL_DIR ?? fileURLToPath(new URL('../../../shared/eval/2wiki/', import.meta.url)),
  'corpus.json',
);

function vocabulary() {
  if (!existsSync(CORPUS)) throw new Error(`text bench: no word source at ${CORPUS}; set CAIRN_EVAL_DIR`);
  const counts = new Map();
  for (const { text } of JSON.parse(readFileSync(CORPUS, 'utf8'))) {
    for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

/** `n` passages and `q` queries, deterministic for a seed. */
export function generateText(n, q, seed = 11) {
  const rand = rng(seed);
  const vocab = vocabulary();
  const cumulative = [];
  let total = 0;
  for (const [, c] of vocab) {
    total += c;
    cumulative.push(total);
  }
  const draw = () => {
    const x = rand() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo][0];
  };
  const passages = [];
  for (let i = 0; i < n; i++) {
    const len = 100 + Math.floor(rand() * 101);
    const words = Array.from({ length: len }, draw);
    passages.push(`${words.join(' ')}.`);
  }
  const mid = vocab
    .slice(100, 5000)
    .map(([w]) => w)
    .filter((w) => w.length > 3);
  const queries = Array.from({ length: q }, () =>
    Array.from({ length: 2 + Math.floor(rand() * 2) }, () => mid[Math.floor(rand() * mid.length)]).join(' '),
  );
  return { passages, queries };
}
