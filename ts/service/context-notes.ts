import { RRF_K } from './fusion.js';

type Item = Record<string, unknown>;

/** A note from `note_list` with a query: the note and its retrieval receipt. */
interface ListedNote {
  id: string;
  key: string;
  value: unknown;
  kind: string;
  visibility: string;
  taskId?: string;
  version: number;
  supersedes: number | null;
  agent: string;
  updatedAt: string;
  receipt: { channels: string[]; ranks: Record<string, number>; score: number };
  /** The question's content words the note does not cover, as the engine judged it. */
  uncovered?: string[];
}

function valueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A note's text as a context item shows it and the engine judges it: `key: value`. */
export function noteText(n: ListedNote): string {
  return `${n.key}: ${valueText(n.value)}`;
}

/**
 * A note's text as the engine judges it against the question: `noteText` with the key's parts
 * as words (`deploy.window` → `deploy window`), as the notes index reads a key; the grounding
 * rules keep `.`, `:`, `/` and `-` inside a word, so a note keyed `deploy.window` did not cover
 * "When is the deploy window?" and a pack put a note merely mentioning both words first.
 */
export function judgedText(n: ListedNote): string {
  // A task note is about its task, as the notes index reads it: its task id covers "AUTH-12" in
  // "what is left on AUTH-12" (kept whole, as the question's word is; no ": " to end the lead).
  const task = n.taskId === undefined ? '' : ` ${n.taskId.replace(/:\s/g, ' ')}`;
  return `${n.key.replace(/[._:/-]+/g, ' ')}${task}: ${valueText(n.value)}`;
}

/**
 * A listed note as a context item: `kind: "note"`, its text (`key: value`), the notes query's
 * receipt as channels/ranks/score, and the note's identity and version. Notes are asserted by
 * agents, not quoted from a document, so the citation says so and has no span.
 */
export function noteItem(n: ListedNote): Item {
  return {
    kind: 'note',
    text: noteText(n),
    score: n.receipt.score,
    channels: n.receipt.channels.map((c) => `note_${c}`),
    ranks: Object.fromEntries(Object.entries(n.receipt.ranks).map(([c, r]) => [`note_${c}`, r])),
    citation: {
      source: {
        kind: 'asserted',
        doc_id: null,
        name: `note ${n.key} v${n.version} by ${n.agent}`,
        ingested_at: n.updatedAt,
      },
      span: null,
    },
    seed: null,
    ...(n.uncovered === undefined ? {} : { uncovered: n.uncovered }),
    receipt: n.receipt,
    note: {
      id: n.id,
      key: n.key,
      kind: n.kind,
      visibility: n.visibility,
      ...(n.taskId === undefined ? {} : { taskId: n.taskId }),
      version: n.version,
      supersedes: n.supersedes,
      agent: n.agent,
      updatedAt: n.updatedAt,
    },
  };
}

/** How many of the question's words an item leaves uncovered; unjudged items count as covering none. */
function missing(item: Item): number {
  return Array.isArray(item.uncovered) ? item.uncovered.length : Number.POSITIVE_INFINITY;
}

/**
 * Note items and handoff items as the one list of what agents asserted: each kind keeps its own
 * order, and of the two kinds' next items the one that leaves fewer of the question's words
 * uncovered goes first, a tie going to the note. Each entry names its own list.
 */
function assertedList(notes: Item[], handoffs: Item[]): { item: Item; list: 'notes' | 'handoffs' }[] {
  const out: { item: Item; list: 'notes' | 'handoffs' }[] = [];
  let i = 0;
  let j = 0;
  while (i < notes.length || j < handoffs.length) {
    const n = notes[i];
    const h = handoffs[j];
    if (h !== undefined && (n === undefined || missing(h) < missing(n))) {
      out.push({ item: h, list: 'handoffs' });
      j++;
    } else if (n !== undefined) {
      out.push({ item: n, list: 'notes' });
      i++;
    }
  }
  return out;
}

/**
 * Knowledge items and note and handoff items as one ranked list of at most `k`, each list keeping
 * its own order: of the two lists' next items, the one that leaves fewer of the question's words
 * uncovered goes first; between equals, the better rank (reciprocal-rank fusion, k = 60), a tie
 * going to the knowledge item. Notes and handoffs rank as one list (`assertedList`). Found by an
 * audit: taking the ranks alone put the knowledge list's first item first whatever it covered, so
 * 22 of 60 questions whose answer was a note got it second, behind a passage covering none of the
 * question. Each item gains `fused: {list, rank, score}` (`list`: knowledge, notes or handoffs;
 * `rank`: in the knowledge list, or in the notes and handoffs ranked together); its own fields
 * are unchanged.
 */
export function mergeNotes(knowledge: Item[], notes: ListedNote[], k: number, handoffs: Item[] = []): Item[] {
  const asserted = assertedList(notes.map(noteItem), handoffs);
  const merged: Item[] = [];
  let i = 0;
  let j = 0;
  while (merged.length < k && (i < knowledge.length || j < asserted.length)) {
    const a = knowledge[i];
    const b = asserted[j];
    const takeAsserted =
      a === undefined ||
      (b !== undefined && (missing(b.item) < missing(a) || (missing(b.item) === missing(a) && j < i)));
    const [item, list, rank] = takeAsserted && b !== undefined ? [b.item, b.list, ++j] : [a as Item, 'knowledge', ++i];
    merged.push({ ...item, fused: { list, rank, score: 1 / (RRF_K + rank) } });
  }
  return merged;
}

/**
 * An item's score on the scale of the merged list: the fused score once notes were merged (a
 * note's own score is the notes query's RRF, a fact's or passage's the engine's: scales of their
 * own, so comparing them put every note before every passage), else its own.
 */
export function fusedScore(item: Item): number {
  const score = (item.fused as { score?: unknown } | undefined)?.score ?? item.score;
  return typeof score === 'number' ? score : 0;
}

export type { ListedNote };
