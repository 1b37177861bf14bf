import { z } from 'zod';

import { ContextItem, EvidenceItem, PackBudget, PackOmitted } from './reply-items.js';
import {
  AttributesOut,
  CitationSource,
  Count,
  Entity,
  Fact,
  Handoff,
  HistoryEvent,
  Id,
  KindCounts,
  Meaning,
  Note,
  SentDate,
  Time,
} from './reply-parts.js';

// The 200 replies of the knowledge verbs (DESIGN.md §2 "Reply shapes"; the engine builds them,
// `ts/service/memory.ts` adds the node's parts). Registered by name in `ts/server/reply-schemas.ts`.

const TypeCounts = z.array(z.object({ type: z.string(), count: Count }));

/** memory_status. */
export const StatusReply = z.object({
  node: z.object({
    status: z
      .enum(['ok', 'degraded'])
      .describe(
        'degraded: the store takes no writes until the node has reopened it (a full or failing disk), or a page is damaged',
      ),
    version: z.string(),
    profile: z.string(),
    uptime_s: Count,
    writes: z
      .object({ state: z.literal('stopped'), reason: z.string(), since: Time })
      .optional()
      .describe('Present while writes are stopped: the failed write and when; reads still work'),
    damaged: z
      .object({ reason: z.string(), since: Time })
      .optional()
      .describe('Present once a read met a damaged page: calls needing it fail until the store is restored'),
  }),
  capabilities: z.object({
    channels: z.array(z.string()),
    meaning: z.string(),
    embedding: z.object({ state: z.string(), done: Count, pending: Count }),
    budgets: z.object({
      context: z.object({
        k_max: Count,
        k_default: Count,
        hops_max: Count,
        hops_default: Count,
        estimator: z.string(),
      }),
      remember: z.object({
        entities: Count,
        relations: Count,
        text_bytes: Count,
        passages: Count,
        passage_bytes: Count,
        name_bytes: Count,
      }),
      export_page_max: Count,
    }),
  }),
  identity: z.object({ user: z.string(), scope: z.string(), agent: z.string() }),
  scope: z.object({
    entities: Count,
    relations: Count,
    documents: Count,
    passages: Count,
    notes: Count.describe('Current notes you may read (user, task and your own agent notes; private ones aside)'),
    handoffs: Count.describe('Unexpired handoffs'),
  }),
  scopes: z
    .array(
      z.object({
        scope: z.string(),
        entities: Count,
        relations: Count,
        documents: Count,
        notes: Count,
        handoffs: Count,
      }),
    )
    .describe('Your scopes in name order; past 100, the 100 holding the most'),
  scopes_omitted: Count.optional().describe('How many scopes the list leaves out'),
  scopes_hint: z.string().optional().describe('When scopes were left out: how to count one'),
  ontology: z
    .object({
      entity_types: TypeCounts.describe('The 100 most used, most used first'),
      relation_types: TypeCounts.describe('The 100 most used, most used first'),
      largest_classes: TypeCounts,
      spellings: z.array(z.string()).describe('Relation type spellings to reuse (those of relation_types)'),
      omitted: z
        .object({ entity_types: Count, relation_types: Count })
        .describe('How many types the lists leave out (the least used)'),
    })
    .optional()
    .describe('Only when a scope was named (field or header)'),
});

/** An entity a write created whose name is spelled like one stored: maybe the same, maybe not. */
const PossibleDuplicate = z.object({
  name: z.string().describe('The entity this call created'),
  id: Id,
  similar_to: z.object({ name: z.string(), id: Id }).describe('The stored entity it is spelled like'),
});

const PossibleDuplicates = z
  .array(PossibleDuplicate)
  .describe(
    'Entities this call created whose name is a near spelling, a word, or a longer form of a stored name ' +
      '(`Priya Ramen`, `Priya`, `Dr. Priya Raman` beside `Priya Raman`): if you meant the stored one, ' +
      'memory_forget the new one by `subject` and send the call again with the stored spelling',
  );

const DuplicatesUnchecked = z
  .literal(true)
  .optional()
  .describe('The call created more than 100 entities (a bulk load): `possible_duplicates` was not checked');

/** memory_remember. */
export const RememberReply = z.object({
  stored: z.object({ entities: Count, relations: Count, passages: Count }),
  updated: z
    .object({ entities: Count, relations: Count })
    .describe(
      'Stored before and changed by this call: entities (a type or attribute merged in), relations ' +
        '(said again with an earlier start, a later end or new attributes)',
    ),
  already: z.boolean().describe('true: this content with this date was stored before; nothing changed'),
  extraction: z.string(),
  linking: z.string(),
  unlinked_passages: z.array(Count).describe('Passages naming no entity, by index: the first 100'),
  unlinked_passages_omitted: Count.optional().describe('How many more `unlinked_passages` are left out'),
  rejected: z
    .array(z.object({ passage: Count, key: z.string().nullable(), reason: z.string() }))
    .describe('Passages not stored, in the call’s order: at most 100, within 16 KiB'),
  rejected_omitted: Count.optional().describe('How many more rejected passages are left out'),
  rejected_hint: z.string().optional().describe('How to list the rejected passages left out'),
  meaning: z.enum(['queued', 'not_armed']),
  doc_id: Id.optional().describe('The first stored document'),
  doc_ids: z.array(Id).optional().describe('Every stored document, when there are several'),
  source: CitationSource.optional().describe(
    'The first document as stored and cited: with `already`, the label and time it was first stored with, ' +
      'which may differ from this call’s `source`',
  ),
  sources: z.array(CitationSource).optional().describe('Each of `doc_ids` as stored and cited'),
  possible_duplicates: PossibleDuplicates,
  possible_duplicates_unchecked: DuplicatesUnchecked,
});

/** memory_document: what was read and stored. */
export const DocumentReply = z.object({
  doc_id: Id.optional().describe('The stored document (absent only when nothing was stored)'),
  name: z.string(),
  type: z.enum(['pdf', 'docx', 'html', 'text']).describe('Read from the leading bytes'),
  already: z.boolean().describe('true: this text with this date was stored before; nothing changed'),
  source: CitationSource.optional().describe(
    'The document as stored and cited: with `already`, the label it was first stored with, not this `name`',
  ),
  stored: z.object({ entities: Count, relations: Count, passages: Count }),
  meaning: z.enum(['queued', 'not_armed']),
  sizes: z.object({
    bytes: Count.describe('The file, decoded'),
    text_bytes: Count.describe('The extracted text, UTF-8'),
    blocks: Count,
    pages: Count.optional().describe('For a PDF'),
  }),
  text: z.string().optional().describe('The extracted text, when at most 16 KiB'),
  blocks: z
    .array(
      z.object({
        kind: z.enum(['paragraph', 'heading', 'list_item']),
        preformatted: z
          .literal(true)
          .optional()
          .describe('Its line breaks and indentation are kept: code (HTML `<pre>`, a Markdown code fence)'),
        page: Count.optional(),
        paragraph: Count,
        start: Count.describe('UTF-8 byte offset into `text`'),
        end: Count,
      }),
    )
    .optional()
    .describe('Reading-order blocks, when the text is at most 16 KiB: where each is in `text` (its bytes start..end)'),
});

/** memory_relate. */
export const RelateReply = z.object({
  fact: Fact,
  created: z.boolean(),
  already: z
    .boolean()
    .describe(
      'true: the fact already said this (a later date confirms it; an earlier start, a later end or a new ' +
        'attribute is a change); nothing was written and no event recorded',
    ),
  ended: z.array(Fact),
  restored: z.array(Fact),
  superseded_by: z.array(Fact).describe('Newer facts that already replace this one'),
  possible_duplicates: PossibleDuplicates,
  possible_duplicates_unchecked: DuplicatesUnchecked,
});

/** When a read's time hides stored facts: how many, and the nearest moments a read would see some. */
const OutsideTime = z.object({
  facts: Count.describe(
    'Stored facts (of the subject; in context, between the entities named) this read’s time does not see',
  ),
  next_valid_from: SentDate.optional().describe('The earliest `valid_from` after the read’s instant'),
  last_valid_to: SentDate.optional().describe('The latest `valid_to` at or before the read’s instant'),
  next_recorded_at: Time.optional().describe('The first recording after `as_of`'),
  name: z
    .string()
    .optional()
    .describe(
      'Recall `nothing_stored` only: the stored name the subject matched loosely (a word of it, a near spelling)',
    ),
  matched: z
    .string()
    .optional()
    .describe('How `name` matched the subject, as `seeding.matched` says it (`word`, `near`)'),
});

/** memory_recall. */
export const RecallReply = z.object({
  state: z.enum(['answered', 'nothing_stored', 'could_not_judge']),
  subject: Entity.nullable(),
  facts: z.array(Fact),
  omitted: Count.optional().describe('Facts beyond `k`: stored, derived and (with `hops`) farther ones'),
  omitted_more: z.literal(true).optional().describe('More facts were cut than `omitted` counts (it stopped counting)'),
  omitted_hint: z
    .string()
    .optional()
    .describe('When `omitted` > 0: that facts were left out, and how to reach them (`next`, a larger `k`)'),
  next: z
    .string()
    .nullable()
    .optional()
    .describe('Send as `cursor` with the same request for the next page; null when nothing more'),
  seeding: z.object({ matched: z.string().nullable(), query: z.string().nullable(), name: z.string().optional() }),
  meaning: Meaning,
  other_matches: z
    .array(z.object({ id: Id, name: z.string() }))
    .optional()
    .describe('Other entities the attribute matched, at most k'),
  other_matches_omitted: z.int().optional().describe('How many more matched than other_matches lists'),
  did_you_mean: z.array(z.string()).optional(),
  why: z.string().optional().describe('With could_not_judge'),
  candidates: z.array(z.string()).optional(),
  outside_time: OutsideTime.optional().describe(
    'Only when no fact is shown but the subject has facts at other times (`answered`; or `nothing_stored` ' +
      'for a subject first recorded after `as_of`): read again with `valid_at` or `as_of` to see them',
  ),
  text_mentions: z
    .object({
      passages: Count.describe('Stored passages of the scope that name the subject word for word'),
      more: z.literal(true).optional().describe('The check stopped reading: there may be more'),
      hint: z.string(),
    })
    .optional()
    .describe(
      'With `nothing_stored`, or `answered` with no fact, for a `subject` that stored text names: ask memory_context to answer from it',
    ),
  elsewhere: z
    .object({
      scopes: z.array(z.object({ scope: z.string(), name: z.string() })).describe('At most 10'),
      more: z.literal(true).optional(),
      hint: z.string(),
    })
    .optional()
    .describe('With no subject found: your other scopes holding that name; send `scope` to recall it there'),
});

/** memory_context; `context`, `omitted` and `budget` when a pack was asked for (`omitted` also when `items` passed 64 KiB). */
export const ContextReply = z.object({
  state: z.enum(['answered', 'nothing_stored', 'could_not_judge']),
  grounding: z.object({
    verdict: z.enum(['grounded', 'grounded_by_meaning', 'related', 'uncited', 'nothing_stored', 'could_not_judge']),
    uncovered: z.array(z.string()),
  }),
  why: z.string().optional().describe('With could_not_judge: why the question cannot be judged'),
  items: z.array(ContextItem),
  seeding: z.object({
    seeds: z.array(z.object({ name: z.string(), id: Id, matched: z.string(), by: z.string() })),
  }),
  meaning: Meaning,
  coverage: z.object({
    seeds: Count,
    reached: Count,
    facts: Count,
    derived: Count.describe("Facts derived from the seeds' relations (symmetric, inverse, transitive)"),
    mentioned: Count,
    full_text: Count,
    meaning: Count.nullable(),
    hops: Count,
    k: Count,
  }),
  outside_time: OutsideTime.optional().describe(
    'Only when no fact between two entities the question names is true at the read’s time but some are stored ' +
      '(the fact ended, or starts later): read again with `valid_at` or `as_of` to see them',
  ),
  elsewhere: z
    .object({
      scopes: z.array(z.object({ scope: z.string(), entities: Count, passages: Count })).describe('At most 10'),
      more: z.literal(true).optional(),
      hint: z.string(),
    })
    .optional()
    .describe('With `nothing_stored` in a scope holding no knowledge: your other scopes that hold some'),
  task_notes: z
    .object({
      notes: z
        .array(z.object({ key: z.string(), visibility: z.literal('task'), taskId: z.string() }))
        .describe('At most 3, best first'),
      hint: z.string(),
    })
    .optional()
    .describe('With `nothing_stored` and no `taskId`: task notes matching the question; send their `taskId`'),
  context: z.string().optional(),
  omitted: z
    .array(PackOmitted)
    .optional()
    .describe('The best ranked items the pack, or the 64 KiB bound of `items`, left out, at most 20'),
  omitted_total: Count.optional().describe('How many items were left out in all'),
  budget: PackBudget.optional(),
});

const Fallback = z.object({
  reason: z.enum(['timeout', 'max_steps', 'unsupported_complexity']),
  timeoutMs: Count.optional(),
  completed: z.array(Count).optional(),
  skipped: z.array(Count).optional(),
  maxSteps: Count.optional(),
  dropped: z.array(z.string()).optional(),
  why: z.array(z.string()).optional(),
});

const StepError = z.object({ code: z.string(), message: z.string() });

/** memory_query (docs/design/query.md). */
export const QueryReply = z.object({
  plan: z.object({
    source: z.enum(['subqueries', 'split', 'whole']),
    complexity: z.enum(['L0', 'L1', 'L2', 'L3']),
    steps: z.array(z.string()),
    dropped: z.array(z.string()),
  }),
  complexity: z.enum(['L0', 'L1', 'L2', 'L3']),
  steps: z.array(
    z.object({
      step: z.int().min(1),
      question: z.string(),
      state: z.enum(['done', 'timed_out', 'skipped', 'failed']),
      grounding: z.string().optional(),
      uncovered: z.array(z.string()).optional().describe('With `related`: the words no kept item covers'),
      items: Count.optional(),
      error: StepError.optional(),
    }),
  ),
  evidence: z.array(EvidenceItem),
  sufficiency: z.enum(['sufficient', 'partial', 'insufficient']),
  sufficiencyWhy: z
    .string()
    .nullable()
    .describe('Why the verdict is not `sufficient` (each reason, "; " between them); null when it is'),
  minEvidence: Count.describe('The evidence needed for `sufficient`: as sent, else 2, or `k` when `k` is 1'),
  fallback: Fallback.nullable(),
  fallbacks: z.array(Fallback),
  context: z.string(),
  omitted: z.array(PackOmitted).describe('The best ranked evidence the pack left out, at most 20'),
  omitted_total: Count.describe('How much evidence the pack left out in all'),
  budget: PackBudget,
  unsupported_complexity: z.array(z.string()).optional(),
  history: z
    .array(
      z.object({
        target: z.object({
          kind: z.enum(['note', 'entity']),
          key: z.string().optional(),
          visibility: z.string().optional(),
          taskId: z.string().optional(),
          subject: z.string().optional(),
        }),
        events: z.array(HistoryEvent),
        nextCursor: z
          .string()
          .nullable()
          .optional()
          .describe('null when the target has no more events, or some were left out (`omittedEvents`)'),
        omittedEvents: Count.optional().describe(
          'Events of this page left out whole, as they did not fit `historyBudget` (memory_history on the target reads them)',
        ),
        error: StepError.optional(),
      }),
    )
    .optional()
    .describe('With includeHistory'),
  historyBudget: z
    .object({
      estimator: z.literal('utf8_bytes_v1'),
      limit: Count.describe('What history may spend: what the pack left of `tokenBudget`, else 8000'),
      used: Count.describe("Estimated tokens of the history's events (their JSON)"),
      omittedEvents: Count.describe('Events left out whole because they did not fit'),
    })
    .optional()
    .describe('With includeHistory: what its events spent'),
});

const ForgetCounts = z.object({
  entities: Count,
  facts: Count,
  documents: Count,
  passages: Count,
  attributes: Count,
  notes: Count,
  handoffs: Count,
});

/** memory_forget: counts for knowledge, the note's identity for `note`, the task for `handoff`. */
export const ForgetReply = z.object({
  state: z.enum(['forgotten', 'already_forgotten']),
  forgotten: ForgetCounts.optional(),
  kept: z.array(z.object({ what: z.string(), count: Count, why: z.string() })).optional(),
  note: z
    .object({ key: z.string(), visibility: z.string(), taskId: z.string().optional(), versions: Count.optional() })
    .optional(),
  handoff: z.object({ taskId: z.string(), capsules: Count.optional() }).optional(),
});

/** delete_user. */
export const DeleteUserReply = z.object({
  state: z.enum(['forgotten', 'already_forgotten']),
  forgotten: ForgetCounts.optional().describe('Summed over every scope, listed or not'),
  scopes: z
    .array(z.object({ scope: z.string(), forgotten: ForgetCounts }))
    .optional()
    .describe('At most 100: past that, those that held the most'),
  scopes_omitted: Count.optional().describe('How many forgotten scopes the list leaves out'),
  scopes_hint: z.string().optional(),
  tokens_revoked: Count.describe('Tokens bound to the user, revoked with it (the caller’s own too)'),
});

/** Where an export's ids were handed out: a digest (never a name), the same in every record. */
const Origin = z
  .string()
  .regex(/^[0-9a-f]{32}$/)
  .describe('Digest of the source store and scope; import keys source ids by it');

/** One record of an export page, by `kind`. */
/** The markers of an entity or fact record cut into runs of its attribute writes (too large for a page). */
const writeRuns = {
  continued: z
    .literal(true)
    .optional()
    .describe('More of its attribute_writes follow in the next records (an entity or fact too large for a page)'),
  follows: Count.min(1)
    .optional()
    .describe('How many of its attribute_writes the records before held; imported only after them'),
};

export const ExportRecord = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('header'),
    format: z.literal('cairn.export'),
    version: z.int(),
    scope: z.string(),
    origin: Origin,
    exported_at: Time,
    kinds: z.array(z.string()),
    withheld: z
      .object({
        private_notes: Count,
        private_versions: Count.describe('Private earlier versions of notes that did leave'),
      })
      .describe(
        'What `includePrivate` (on a node allowing private notes) would add. Other agents’ own notes are not ' +
          'the caller’s to read: neither exported nor counted',
      ),
  }),
  Entity.extend({
    kind: z.literal('entity'),
    recorded_at: Time,
    origin: Origin,
    attribute_writes: z
      .array(
        z.object({
          attributes: AttributesOut,
          from: SentDate,
          recorded_at: Time,
          source: z.string().optional().describe('The `source` label the write came under'),
        }),
      )
      .optional()
      .describe(
        'Its attribute writes when more than one, dated or under a `source`: what each set, from when, known since ' +
          'when, under which label',
      ),
    ...writeRuns,
  }),
  z.object({
    kind: z.literal('fact'),
    origin: Origin,
    id: Id,
    from: Id,
    to: Id,
    from_name: z.string().nullable(),
    to_name: z.string().nullable(),
    type: z.string(),
    attributes: AttributesOut,
    valid_from: SentDate.nullable(),
    valid_to: SentDate.nullable(),
    recorded_at: Time,
    ended_at: Time.optional(),
    valid_to_before_end: SentDate.nullable()
      .optional()
      .describe('On a fact a `replaces` ended: the valid_to it had until ended_at (null: open)'),
    source_date: SentDate.optional().describe("When it was said (the call's date), when that is not valid_from"),
    version_of: Id.optional().describe('On an earlier version of a revised fact: the fact it is a version of'),
    attribute_writes: z
      .array(
        z.object({
          attributes: AttributesOut,
          from: SentDate.nullable().describe("The start it stated (null: the fact's own, which has none)"),
          recorded_at: Time,
        }),
      )
      .optional()
      .describe(
        'Once the fact was said again with attributes that change what is true from some start: what each write ' +
          'set, from when, known since when (a read at a valid instant shows per key the latest start at or before it)',
      ),
    attribute_writes_from_fact: Count.optional().describe(
      "On an earlier version, in place of attribute_writes: its writes are the first n of its fact's",
    ),
    ...writeRuns,
    provenance: z.object({
      kind: z.enum(['asserted', 'document']),
      doc_id: Id.optional(),
      label: z.string().nullable(),
      agent: z.string(),
      forgotten: z.literal(true).optional().describe('The document it cites was forgotten; the fact was kept'),
      also: z
        .array(
          z.object({
            kind: z.enum(['asserted', 'document']),
            doc_id: Id.optional(),
            label: z.string().nullable(),
            agent: z.string(),
            recorded_at: Time,
            source_date: SentDate.optional(),
            forgotten: z.literal(true).optional(),
          }),
        )
        .optional()
        .describe(
          'Every other provenance that stated the fact (another document, label, or none), in order, with when the ' +
            'store learnt it from that one; forgetting one keeps the fact while another is left',
        ),
    }),
  }),
  z.object({
    kind: z.literal('document'),
    origin: Origin,
    id: Id,
    text: z.string(),
    label: z.string().nullable(),
    date: SentDate.nullable(),
    ingested_at: Time,
    passages: z.array(z.object({ ordinal: Count, start: Count, end: Count })),
  }),
  Note.omit({ kind: true, supersedes: true }).extend({
    kind: z.literal('note'),
    origin: Origin,
    noteKind: Note.shape.kind,
    owner: z.string().optional().describe('The agent an agent-visibility note belongs to'),
    versions: z
      .array(
        z.object({
          value: z.unknown(),
          noteKind: Note.shape.kind,
          private: z.boolean(),
          version: Count,
          confidence: z.number().optional(),
          confidenceBasis: z.string().optional(),
          agent: z.string(),
          createdAt: Time,
          updatedAt: Time,
        }),
      )
      .describe('Earlier versions, oldest first (the record is its last: current unless `continued`)'),
    continued: z
      .literal(true)
      .optional()
      .describe('Later versions follow in the next records (a note too large for a page)'),
    follows: z
      .int()
      .min(1)
      .optional()
      .describe('Last version of the record before; imported only into a copy at that version'),
  }),
  Handoff.extend({ kind: z.literal('handoff'), origin: Origin }),
]);

/** memory_export: one page; `next` is the cursor of the following page, null when done. */
export const ExportReply = z.object({
  records: z.array(ExportRecord),
  next: z
    .string()
    .nullable()
    .describe('The `cursor` of the next page; null on the page holding the last record the caller gets'),
});

/** memory_import. */
export const ImportReply = z.object({
  imported: KindCounts,
  unchanged: KindCounts,
  skipped: z.array(z.object({ index: Count, reason: z.string() })),
  not_reproduced: z.array(z.object({ index: Count, what: z.string(), why: z.string() })),
});
