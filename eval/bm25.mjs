// The README's baseline: BM25 over title + text (k1 1.2, b 0.75, English stop words), whole corpus
// in memory. Kept independent of Cairn's own full-text code so the baseline cannot drift with it.

const STOP = new Set(
  'a an and are as at be but by for from has have he her his i in is it its of on or she that the their them they this to was were what when where which who whom why will with did does do how'.split(
    ' ',
  ),
);

function terms(text) {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => !STOP.has(t));
}

let index;

function build(corpus) {
  const docs = corpus.map((p) => {
    const tf = new Map();
    const words = terms(`${p.title} ${p.text}`);
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { title: p.title, tf, len: words.length };
  });
  const df = new Map();
  for (const d of docs) for (const w of d.tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const avg = docs.reduce((s, d) => s + d.len, 0) / docs.length;
  return { docs, df, avg };
}

/** The titles of the `k` best BM25 matches of `question`. */
export function bm25Top(corpus, question, k) {
  index ??= build(corpus);
  const { docs, df, avg } = index;
  const q = [...new Set(terms(question))];
  const n = docs.length;
  const scored = docs.map((d) => {
    let s = 0;
    for (const w of q) {
      const f = d.tf.get(w);
      if (!f) continue;
      const idf = Math.log(1 + (n - df.get(w) + 0.5) / (df.get(w) + 0.5));
      s += (idf * (f * 2.2)) / (f + 1.2 * (0.25 + (0.75 * d.len) / avg));
    }
    return [s, d.title];
  });
  return scored
    .filter(([s]) => s > 0)
    .sort((a, b) => b[0] - a[0])
    .slice(0, k)
    .map(([, t]) => t);
}
