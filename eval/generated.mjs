// A second question set, made here from the corpus itself, to check that retrieval tuned on the
// set's 51 questions generalises: the set's README keeps its other questions out of reach, so
// these stand in for them. Same kinds as the set (2WikiMultihopQA): compositional ("where was
// the director of film X born?", gold: X and its director), bridge comparison (two films and
// both directors), comparison (two films). A film is a passage saying "film" early on whose text
// names its director ("directed by D") where D (or "D (…)") is a title of the corpus; passages
// that are gold in the set's own questions are left out, so no question here shares a gold
// passage with one there. Names are title-cased as the set spells them ("I'Ll Be Going Now").
// Deterministic: the same corpus gives the same questions.

/** "i'll be going now" → "I'Ll Be Going Now", as 2Wiki questions spell titles. */
function titleCase(s) {
  return s.replace(/[A-Za-zÀ-ÿ]+/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());
}

/** The director a film passage names, as a title of the corpus; `undefined` when none. */
function directorOf(passage, titles) {
  const m = passage.text.match(/directed by ([^,.;()]+?)(?:[,.;(]| and | who | from | with | starring)/);
  if (!m) return undefined;
  const name = m[1].trim();
  if (titles.has(name)) return name;
  return [...titles.keys()].find((t) => t.startsWith(`${name} (`));
}

/** A seeded shuffle (the same LCG as the benches), so the pairs are the same every run. */
function shuffled(xs) {
  let seed = 7;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const ASK_DIRECTOR = [
  (f) => `Where was the director of film ${f} born?`,
  (f) => `What nationality is the director of film ${f}?`,
  (f) => `What is the date of death of the director of film ${f}?`,
  (f) => `What is the place of birth of the director of film ${f}?`,
];
const COMPARE_DIRECTORS = [
  (a, b) => `Which film has the director who was born first, ${a} or ${b}?`,
  (a, b) => `Which film has the director who died first, ${a} or ${b}?`,
  (a, b) => `Do both films ${a} and ${b} have the directors from the same country?`,
];

/**
 * 75 questions `{question, gold_titles, kind}` from `corpus` (`[{title, text}]`): 40
 * compositional, 20 bridge comparisons, 15 comparisons; `setQuestions` are the set's own, whose
 * gold passages are left out.
 */
export function generatedQuestions(corpus, setQuestions) {
  const titles = new Map(corpus.map((p) => [p.title, p]));
  const taken = new Set(setQuestions.flatMap((q) => q.gold_titles));
  const films = [];
  for (const p of corpus) {
    if (!/\bfilm\b/.test(p.text.slice(0, 200)) || taken.has(p.title)) continue;
    const director = directorOf(p, titles);
    if (director && director !== p.title && !taken.has(director)) films.push({ film: p.title, director });
  }
  const pool = shuffled(films);
  const out = [];
  pool.slice(0, 40).forEach(({ film, director }, i) => {
    out.push({ question: ASK_DIRECTOR[i % 4](titleCase(film)), gold_titles: [film, director], kind: 'compositional' });
  });
  for (let i = 40; i < 80; i += 2) {
    const [a, b] = [pool[i], pool[i + 1]];
    const question = COMPARE_DIRECTORS[((i - 40) / 2) % 3](titleCase(a.film), titleCase(b.film));
    out.push({ question, gold_titles: [a.film, b.film, a.director, b.director], kind: 'bridge_comparison' });
  }
  for (let i = 80; i < 110; i += 2) {
    const [a, b] = [pool[i], pool[i + 1]];
    const question = `Which film came out first, ${titleCase(a.film)} or ${titleCase(b.film)}?`;
    out.push({ question, gold_titles: [a.film, b.film], kind: 'comparison' });
  }
  return out;
}
