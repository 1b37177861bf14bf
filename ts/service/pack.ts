import type { z } from 'zod';

import type { PackBudget, PackOmitted } from '../protocol/reply-items.js';

/** The token estimator of context packs: ceil(UTF-8 bytes / 4). */
export const ESTIMATOR = 'utf8_bytes_v1';

/** Estimated tokens of `s` under `utf8_bytes_v1`. */
export function estimateTokens(s: string): number {
  return Math.ceil(Buffer.byteLength(s, 'utf8') / 4);
}

/** The purposes a pack can be built for. */
export type Purpose = 'general' | 'coding' | 'research' | 'browser';

/** What a caller asked the pack to respect. */
export interface PackOptions {
  tokenBudget?: number | undefined;
  maxItems?: number | undefined;
  purpose?: Purpose | undefined;
}

const HEADINGS: Record<Purpose, string> = {
  general: 'Memory relevant to the question (cite the [n] markers):',
  coding: 'Project memory for this coding task (cite the [n] markers):',
  research: 'Sources from memory for this research question (cite the [n] markers):',
  browser: 'Memory relevant to this page (cite the [n] markers):',
};

/**
 * The kinds each purpose prefers (docs/design/query.md). Among items that leave as many of the
 * question's words uncovered, a preferred item's score counts `PREFERENCE_WEIGHT` times, so it
 * moves ahead of items of similar relevance but not of items ranked far above it, nor of items
 * covering more of the question. Kinds are an item's `kind`, or a note item's note kind.
 */
export const PREFERRED_KINDS: Record<Purpose, readonly string[]> = {
  general: ['user_preference', 'user_fact'],
  coding: ['decision', 'task_state', 'handoff'],
  research: ['passage', 'fact'],
  browser: ['user_preference', 'passage'],
};
export const PREFERENCE_WEIGHT = 1.5;

type Item = Record<string, unknown>;

/** One omitted item: its rank in the input, what it was, and why it was left out (the reply schema's type). */
export type Omitted = z.infer<typeof PackOmitted>;

/** Why an item is not in the pack. */
export type OmitReason = Omitted['reason'];

/** The kind a purpose preference looks at: a note's own kind, else the item kind. */
export function packKind(item: Item): string {
  const note = item.note as { kind?: unknown } | undefined;
  if (item.kind === 'note' && typeof note?.kind === 'string') return note.kind;
  return typeof item.kind === 'string' ? item.kind : 'item';
}

/** A stable id of an item for `omitted` (fact, doc, entity, note or handoff id), if it has one. */
export function itemId(item: Item): string | null {
  const note = item.note as { id?: unknown } | undefined;
  const handoff = item.handoff as { id?: unknown } | undefined;
  for (const v of [note?.id, handoff?.id, item.id, item.doc_id]) if (typeof v === 'string') return v;
  return null;
}

/** The heading path a passage sits under, as its line's lead (`Platform team › People: `). */
function headingLead(item: Item): string {
  const path = Array.isArray(item.headings) ? item.headings.filter((h) => typeof h === 'string') : [];
  return path.length === 0 ? '' : `${path.join(' › ')}: `;
}

function line(n: number, item: Item): string {
  const said = typeof item.text === 'string' ? item.text : JSON.stringify(item.text ?? '');
  // The reader of "The team has three engineers." sees which team it is, as grounding did.
  const text = `${headingLead(item)}${said}`;
  const citation = item.citation as { source?: { name?: unknown } } | undefined | null;
  const from = typeof citation?.source?.name === 'string' ? ` — ${citation.source.name}` : '';
  // A fact's date is `source_date`, a passage's `date` (DESIGN.md reply shapes), a handoff's when it was made.
  const handoff = item.handoff as { createdAt?: unknown } | undefined;
  const when = [item.source_date, item.date, handoff?.createdAt].find((d) => typeof d === 'string');
  const date = when === undefined ? '' : ` (${when})`;
  const note = item.kind === 'note' ? ` (note, ${packKind(item)})` : '';
  return `[${n}] ${text}${note}${from}${date}`;
}

/** An item's own `score` (0 without one): how items are ranked unless a caller says otherwise. */
export function ownScore(item: Item): number {
  return typeof item.score === 'number' ? item.score : 0;
}

/**
 * Items in the order a purpose reads them: those covering more of the question first (fewer
 * `uncovered` words; an item without them, when the question had no content word, counts none),
 * then `scoreOf` with preferred kinds weighted; ties keep input order. Coverage leads because a
 * pack is what the caller reads and its verdict is judged over: found by an audit, `maxItems: 1`
 * kept a preference note that matched only "status" of "What is the Atlas deploy status?" (the
 * notes list's first, tied with the knowledge list's first and weighted past it) and left out
 * the passage that answers.
 */
export function orderForPurpose(items: Item[], purpose: Purpose, scoreOf = ownScore): Item[] {
  const preferred = PREFERRED_KINDS[purpose];
  const weighted = items.map((item, i) => {
    const score = scoreOf(item);
    const missing = Array.isArray(item.uncovered) ? item.uncovered.length : 0;
    return { item, i, missing, w: preferred.includes(packKind(item)) ? score * PREFERENCE_WEIGHT : score };
  });
  weighted.sort((a, b) => a.missing - b.missing || b.w - a.w || a.i - b.i);
  return weighted.map((w) => w.item);
}

/** A grounding verdict and its uncovered words, as memory_context replies carry them. */
export interface Grounding {
  verdict: string;
  uncovered: string[];
}

/** The verdicts that rest on the items, judged again over the items a caller keeps. */
const JUDGED_OVER_ITEMS = new Set(['grounded', 'related', 'uncited']);

/**
 * The grounding verdict of the items a pack kept, from each item's `uncovered` words (the engine
 * judges every item it found and the notes beside them, but the caller reads only those kept):
 * `grounded` when a kept cited item covers every content word (a note is cited, as asserted; an
 * entity is not), else `related` with the fewest words a kept cited item leaves uncovered;
 * `uncited` when the pack keeps no cited item (`uncovered`: every word of `asked`, the question's
 * content words), or only an entity covers the question (the words the best kept cited item leaves).
 * `uncovered` is never empty beside a verdict other than `grounded` (found by QA: an empty pack
 * said `uncited` with `uncovered: []`, which reads as "every word covered"). Verdicts that do not
 * rest on the items (`nothing_stored`, `could_not_judge`) and `grounded_by_meaning` are kept as they are.
 */
export function packGrounding(grounding: Grounding, kept: Item[], asked: string[]): Grounding {
  if (!JUDGED_OVER_ITEMS.has(grounding.verdict)) return grounding;
  const judged = kept.filter((item) => Array.isArray(item.uncovered));
  const uncovered = (item: Item) => item.uncovered as string[];
  const cited = judged.filter((item) => item.citation !== null && item.citation !== undefined);
  let best: string[] | undefined;
  for (const item of cited) {
    if (best === undefined || uncovered(item).length < best.length) best = uncovered(item);
  }
  if (best?.length === 0) return { verdict: 'grounded', uncovered: [] };
  if (best === undefined) return { verdict: 'uncited', uncovered: asked };
  if (judged.some((item) => uncovered(item).length === 0)) return { verdict: 'uncited', uncovered: best };
  return { verdict: 'related', uncovered: best };
}

/**
 * How many omitted items a pack names: the best ranked of those left out. An audit saw a 300-token
 * pack list 89 (6.9 KB, more than the pack), and a query over 8 steps of k 100 can leave out
 * hundreds; `omitted_total` counts them all.
 */
const OMITTED_LISTED = 20;

/**
 * The most bytes of JSON a reply's `items` take, pack or none: past it an item is omitted whole
 * (`reply_bytes`), though one is always kept. `k` counts items, not their size: found by an
 * audit, a context over passages of 60 KB (each carried thrice: `text`, the citation's span and,
 * in a pack, its line) or entities of many attributes answered 1.2 MB at the default `k`; this is
 * recall's page bound (about 16,000 tokens). `tokenBudget` is the tighter bound where it is given.
 */
export const ITEMS_BYTES = 64 * 1024;

/** An item's bytes in `items`: its JSON and a separator. */
const itemBytes = (item: Item) => Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;

/** An omitted entry for `item` at `rank` (from 1). */
function omittedEntry(item: Item, rank: number, tokens: number, reason: OmitReason): Omitted {
  return { rank, kind: typeof item.kind === 'string' ? item.kind : 'item', id: itemId(item), tokens, reason };
}

/**
 * Ranked items without a pack, within `ITEMS_BYTES`: those kept, and, when any was left out, the
 * best ranked of those (`omitted`, reason `reply_bytes`) and how many in all (`omitted_total`).
 */
export function boundItems(items: Item[]): { items: Item[]; omitted?: Omitted[]; omitted_total?: number } {
  const kept: Item[] = [];
  const omitted: Omitted[] = [];
  let bytes = 0;
  items.forEach((item, i) => {
    const size = itemBytes(item);
    if (kept.length > 0 && bytes + size > ITEMS_BYTES) {
      omitted.push(omittedEntry(item, i + 1, estimateTokens(String(item.text ?? '')), 'reply_bytes'));
      return;
    }
    bytes += size;
    kept.push(item);
  });
  if (omitted.length === 0) return { items };
  return { items: kept, omitted: omitted.slice(0, OMITTED_LISTED), omitted_total: omitted.length };
}

/**
 * A context pack from ranked items: ordered for the purpose, then taken while they fit the token
 * budget, the item cap and `ITEMS_BYTES`; an item that does not fit is omitted whole (never cut),
 * and later, smaller items may still fit. Returns the text, the items kept, the first omitted
 * ones with the reason and how many were omitted in all, and the budget.
 */
export function buildPack(items: Item[], opts: PackOptions, scoreOf = ownScore) {
  const purpose = opts.purpose ?? 'general';
  const heading = HEADINGS[purpose];
  // Bytes are summed and rounded once, so `used` is exactly the estimate of the returned text.
  let bytes = Buffer.byteLength(heading, 'utf8');
  const kept: Item[] = [];
  const lines = [heading];
  const omitted: Omitted[] = [];
  let keptBytes = 0;
  orderForPurpose(items, purpose, scoreOf).forEach((item, i) => {
    const l = line(kept.length + 1, item);
    const lineBytes = Buffer.byteLength(`\n${l}`, 'utf8');
    const size = itemBytes(item);
    let reason: OmitReason | undefined;
    if (opts.maxItems !== undefined && kept.length >= opts.maxItems) reason = 'max_items';
    else if (opts.tokenBudget !== undefined && Math.ceil((bytes + lineBytes) / 4) > opts.tokenBudget) {
      reason = 'token_budget';
    } else if (kept.length > 0 && keptBytes + size > ITEMS_BYTES) reason = 'reply_bytes';
    if (reason !== undefined) {
      omitted.push(omittedEntry(item, i + 1, estimateTokens(`\n${l}`), reason));
      return;
    }
    keptBytes += size;
    bytes += lineBytes;
    kept.push(item);
    lines.push(l);
  });
  return {
    context: lines.join('\n'),
    items: kept,
    omitted: omitted.slice(0, OMITTED_LISTED),
    omitted_total: omitted.length,
    budget: {
      estimator: ESTIMATOR,
      limit: opts.tokenBudget ?? null,
      used: Math.ceil(bytes / 4),
      purpose,
    } satisfies z.infer<typeof PackBudget>,
  };
}
