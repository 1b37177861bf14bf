import { z } from 'zod';

import { Citation, Count, Entity, Fact, Id, Receipt, SentDate, Time } from './reply-parts.js';

// The ranked items of memory_context and memory_query (DESIGN.md "item (context)") and the
// context pack built from them (`ts/service/pack.ts` builds exactly these).

/**
 * Where two ranked lists were fused (knowledge items, and notes with handoffs ranked as one list):
 * present only when notes or handoffs matched.
 */
const Fused = z.object({ list: z.enum(['knowledge', 'notes', 'handoffs']), rank: z.int().min(1), score: z.number() });

/** What every ranked item carries: its text, score, the channels that found it and its rank in each. */
const ranked = {
  text: z.string(),
  score: z.number(),
  channels: z
    .array(z.string())
    .describe(
      'seed, graph, relation, typed, mentions, full_text, recency, meaning; note_token, note_trigram; handoff_task, handoff_addressed',
    ),
  ranks: z.record(z.string(), z.int()),
  seed: z.string().nullable().describe('The seed entity the item was reached from'),
  uncovered: z
    .array(z.string())
    .optional()
    .describe(
      "The question's content words this item does not cover (empty: it grounds the answer alone); a note is judged as a passage is; absent when the question has no content word",
    ),
  fused: Fused.optional(),
};

/** The identity of the note a note item shows. */
const NoteRef = z.object({
  id: Id,
  key: z.string(),
  kind: z.string(),
  visibility: z.string(),
  taskId: z.string().optional(),
  version: z.int().min(1),
  supersedes: z.int().nullable().describe('The version this one replaced'),
  agent: z.string(),
  updatedAt: Time,
});

/** The capsule a handoff item shows (its text holds the summary and sections). */
const HandoffRef = z.object({
  id: Id,
  taskId: z.string(),
  agent: z.string().describe('The agent that handed off'),
  to: z.string().optional(),
  status: z.string().nullable(),
  createdAt: Time,
  expiresAt: Time.optional(),
});

/** The five kinds of item, each with `extra` fields (query evidence adds the steps that found it). */
function itemOf<E extends z.ZodRawShape>(extra: E) {
  return z.discriminatedUnion('kind', [
    Fact.extend({ kind: z.literal('fact'), ...ranked, ...extra }),
    z.object({
      kind: z.literal('passage'),
      doc_id: Id,
      ordinal: Count,
      source: z.string().nullable(),
      date: SentDate.nullable(),
      headings: z
        .array(z.string())
        .describe(
          'Titles of the markdown headings it sits under that its text does not hold, outermost first ([] for none); they count for grounding, the citation quotes only the text',
        ),
      citation: Citation.nullable(),
      ...ranked,
      ...extra,
    }),
    Entity.extend({ kind: z.literal('entity'), citation: z.null(), ...ranked, ...extra }),
    z.object({ kind: z.literal('note'), citation: Citation, receipt: Receipt, note: NoteRef, ...ranked, ...extra }),
    z.object({ kind: z.literal('handoff'), citation: Citation, handoff: HandoffRef, ...ranked, ...extra }),
  ]);
}

/** A memory_context item: a fact, a passage, an entity, a note of the caller or a handoff capsule it may resume. */
export const ContextItem = itemOf({});

/**
 * A memory_query evidence item: a context item with the steps that found it, its rank in each, and
 * its line in the reply's `context`.
 */
export const EvidenceItem = itemOf({
  steps: z.array(z.int().min(1)),
  stepRanks: z.record(z.string(), z.int().min(1)).describe('step number → rank in that step'),
  line: z.int().min(1).describe("this item's number in the reply's `context` (its `[n]` line)"),
});

/** An item left out of a context pack, and why. */
export const PackOmitted = z.object({
  rank: z.int().min(1),
  kind: z.string(),
  id: Id.nullable(),
  tokens: Count,
  reason: z.enum(['token_budget', 'max_items', 'reply_bytes']),
});

/** What a context pack spent: estimated tokens (`utf8_bytes_v1` = ceil(bytes / 4)) of `context`. */
export const PackBudget = z.object({
  estimator: z.literal('utf8_bytes_v1'),
  limit: Count.nullable(),
  used: Count,
  purpose: z.enum(['general', 'coding', 'research', 'browser']),
});
