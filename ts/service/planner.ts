// The deterministic planner of memory_query (docs/design/query.md): no model, no randomness, the
// same query always gives the same plan.

import { resolveReferences } from './planner-refer.js';

/** L0 one lookup, L1 one context, L2 several steps, L3 beyond what the planner does. */
export type Complexity = 'L0' | 'L1' | 'L2' | 'L3';

/** A plan: the steps' questions, where they came from, and how complex the query looked. */
export interface Plan {
  source: 'subqueries' | 'split' | 'whole';
  steps: string[];
  /** Parts the planner found beyond `maxSteps`, not run. */
  dropped: string[];
  complexity: Complexity;
  /** Why the query is L3, when it is. */
  unsupported: string[];
}

/**
 * English conjunctions split on as whole words, longest first so "as well as" wins over "as".
 * "and then" is covered by "and" (the "then" left at the start of a part is trimmed). German
 * `und`, `oder`, `sowie` too (found by QA: "Wer besitzt X und welche Datenbank nutzt Y" ran as
 * one step, and no one passage answers both halves of a question).
 */
const EN_CONJUNCTIONS = ['as well as', 'and also', 'and then', 'and', 'or', 'then', 'also', 'sowie', 'und', 'oder'];
/**
 * Chinese conjunctions, longest first (以及 before 及 is not listed: 及 alone is too common). 和
 * before a question word is "with" ("Tom Lee 和谁结婚": whom did Tom Lee marry), not "and".
 */
const ZH_CONJUNCTIONS = ['以及', '并且', '或者', '然后', '还有', '和(?![谁什哪何几])'];
/** Sentence and clause separators that always split. */
const SEPARATORS = /[;；?？\n]+/u;
/** A cut at an English conjunction, a leading comma going with it. */
const EN_CUT = new RegExp(`\\s*,?\\s+(?:${EN_CONJUNCTIONS.map(escapeRegExp).join('|')})\\s+`, 'iu');
/** A cut at a Chinese conjunction. */
const ZH_CUT = new RegExp(`\\s*(?:${ZH_CONJUNCTIONS.join('|')})\\s*`, 'u');
/** The same cuts, every one in a part. */
const EN_CUTS = new RegExp(EN_CUT.source, 'giu');
const ZH_CUTS = new RegExp(ZH_CUT.source, 'gu');
/** Leading words a split part may keep from its conjunction ("… and then X" → "X"). */
const LEADING = /^(?:then|also|and|or)\s+/iu;

/** Words that ask for reasoning the planner does not do: comparison, counting, aggregation, why. */
const L3_MARKERS: { re: RegExp; why: string }[] = [
  { re: /\b(compare|comparison|versus|vs\.?|difference between)\b/iu, why: 'comparison' },
  { re: /\b(how many|count|total|sum|average|most|least)\b/iu, why: 'aggregation' },
  { re: /\bwhy\b/iu, why: 'explanation' },
  { re: /(比较|对比|区别|多少|几个|总共|平均|为什么)/u, why: 'comparison, aggregation or explanation' },
];

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/u;

/** A question: an English question word first, a question mark, or a Chinese question word anywhere
 * (Chinese puts it where the answer goes: 李雷是谁, 李雷在哪里). */
const QUESTION = /^(what|who|where|when|which|how)\b|[?？]|谁|哪|什么|何时|几时|怎么|怎样|如何|吗$|呢$/iu;

/** Whether a split part is substantial enough to be a step: a word of two letters, or two CJK characters. */
function substantial(part: string): boolean {
  const t = part.trim();
  if (CJK.test(t)) return [...t.replace(/\s/gu, '')].length >= 2;
  return /[\p{L}\p{N}]{2,}/u.test(t);
}

/**
 * Splits each part at `sep` (a global regex), left to right, keeping a cut only where the text
 * before it (since the last kept cut) and the text after it are both substantial. A conjunction
 * character that starts or ends a word (和 in 和平, "peace") then leaves the part whole there
 * without vetoing the real cuts beside it: 和平是什么以及战争是什么 is two parts.
 */
function cutWhereSubstantial(parts: string[], sep: RegExp): string[] {
  return parts.flatMap((p) => {
    const pieces: string[] = [];
    let start = 0;
    for (const m of p.matchAll(sep)) {
      const end = m.index + m[0].length;
      if (substantial(p.slice(start, m.index)) && substantial(p.slice(end))) {
        pieces.push(p.slice(start, m.index).trim());
        start = end;
      }
    }
    pieces.push(p.slice(start).trim());
    return pieces;
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

/** Stands for the `i`th protected name while a query is split: no conjunction or separator in it. */
const mask = (i: number) => `\uE000name${i}\uE000`;
const MASKED = /\uE000name(\d+)\uE000/gu;

/**
 * The parts of a query split at separators and conjunctions, in order, each trimmed. `names`
 * (stored entity names the query holds) are never cut: "Johnson and Johnson" stays whole.
 */
export function splitQuery(query: string, names: string[] = []): string[] {
  // Longest first, so a name holding a shorter one is protected whole.
  const kept = [...new Set(names)].filter((n) => n.trim() !== '').sort((a, b) => b.length - a.length);
  const originals: string[] = [];
  let masked = query;
  for (const name of kept) {
    masked = masked.replace(new RegExp(escapeRegExp(name), 'giu'), (found) => {
      originals.push(found);
      return mask(originals.length - 1);
    });
  }
  const unmask = (part: string) => part.replace(MASKED, (m, i: string) => originals[Number(i)] ?? m);
  return split(masked).map(unmask);
}

/**
 * Whether `query` holds a place the planner may cut (a separator between two parts, or a
 * conjunction), kept or not: only there can stored names change the plan. Inside a name they keep
 * a cut out ("Johnson and Johnson").
 */
export function mayCut(query: string): boolean {
  const parts = query.split(SEPARATORS).filter((s) => s.trim() !== '');
  return parts.length > 1 || parts.some((p) => EN_CUT.test(p) || ZH_CUT.test(p));
}

function split(query: string): string[] {
  let parts = query
    .split(SEPARATORS)
    .map((s) => s.trim())
    .filter(substantial);
  parts = cutWhereSubstantial(parts, EN_CUTS);
  parts = cutWhereSubstantial(parts, ZH_CUTS);
  return parts
    .map((p) =>
      p
        .replace(LEADING, '')
        .replace(/^[,，、\s]+|[,，、\s]+$/gu, '')
        .trim(),
    )
    .filter(substantial);
}

function words(s: string): number {
  if (CJK.test(s)) return Math.ceil([...s.replace(/\s/gu, '')].length / 2);
  return s.split(/\s+/u).filter((w) => w !== '').length;
}

/**
 * The plan of a query: explicit `subqueries` first (in order, duplicates removed); otherwise the
 * query split on conjunctions, never inside one of `names`; at most `maxSteps` steps (the rest are `dropped`). Complexity: L3
 * when parts were dropped or the query asks for comparison, counting or explanation; else L2 for
 * several steps, L0 for one short lookup (≤ 4 words, no question word), L1 otherwise.
 */
export function plan(query: string, subqueries: string[] | undefined, maxSteps: number, names: string[] = []): Plan {
  const explicit = subqueries !== undefined && subqueries.length > 0;
  const raw = explicit
    ? subqueries.map((s) => s.trim()).filter((s) => s !== '')
    : resolveReferences(splitQuery(query, names), names);
  const parts = [...new Set(raw.length === 0 ? [query.trim()] : raw)];
  const source = explicit ? 'subqueries' : parts.length > 1 ? 'split' : 'whole';
  const steps = parts.slice(0, maxSteps);
  const dropped = parts.slice(maxSteps);
  const unsupported = L3_MARKERS.filter((m) => m.re.test(query)).map((m) => m.why);
  if (dropped.length > 0) unsupported.push(`${parts.length} parts, more than maxSteps ${maxSteps}`);
  let complexity: Complexity;
  if (unsupported.length > 0) complexity = 'L3';
  else if (steps.length > 1) complexity = 'L2';
  else if (words(steps[0] ?? '') <= 4 && !QUESTION.test(query.trim())) complexity = 'L0';
  else complexity = 'L1';
  return { source, steps, dropped, complexity, unsupported };
}
