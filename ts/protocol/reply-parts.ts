import { z } from 'zod';

// The shapes several replies share (DESIGN.md §2 "Reply shapes"). Objects are `z.object`: the
// OpenAPI document leaves them open (DESIGN: "more may be added, none renamed"), and the tests
// close them to catch a field the engine sends that these do not name (`ts/server/reply-schemas.ts`).

/** An id on the wire: a 64-bit unsigned integer as a decimal string. */
export const Id = z
  .string()
  .regex(/^[0-9]+$/)
  .describe('A 64-bit unsigned id as a decimal string');

/** A time the node recorded: ISO 8601 UTC with milliseconds. */
export const Time = z.iso.datetime().describe('ISO 8601 UTC with milliseconds');

/** A date as it was sent (`date`, `valid_from`, …): an ISO 8601 date or date-time. */
export const SentDate = z.string();

/** A count. */
export const Count = z.int().min(0);

/** A JSON object of attributes. */
export const AttributesOut = z.record(z.string(), z.unknown());

/** What a reply left out of one entity's or fact's attributes (at most 8 KiB of JSON are shown). */
export const AttributesOmitted = z
  .object({ count: Count, bytes: Count, keys: z.array(z.string()).describe('The first 10'), hint: z.string() })
  .optional()
  .describe('Attributes past the 8 KiB a reply shows of one entity or fact; memory_export gives them all');

/** `{id, name, types, attributes}`: an entity as every verb shows it. */
export const Entity = z.object({
  id: Id,
  name: z.string(),
  types: z.array(z.string()),
  attributes: AttributesOut,
  attributes_omitted: AttributesOmitted,
});

/** Where a cited item comes from: a stored document, or an assertion (facts, notes). */
export const CitationSource = z.object({
  kind: z.enum(['document', 'asserted']),
  doc_id: Id.nullable(),
  name: z.string().nullable().describe('The source label'),
  ingested_at: Time.nullable().describe('null when the document is gone'),
});

/** A citation: the source and the quoted span (Unicode code-point offsets into the document text). */
export const Citation = z.object({
  source: CitationSource,
  span: z
    .object({ text: z.string().optional().describe('absent with `compact`'), start: Count, end: Count })
    .nullable(),
  span_state: z
    .enum(['asserted', 'source_forgotten', 'source_not_imported', 'not_quoted', 'mismatch'])
    .optional()
    .describe(
      'Why there is no span: asserted (no document), source_forgotten (the document is gone), source_not_imported (a fact imported before its document; the citation resolves once the document is imported), not_quoted (no sentence names the ends), mismatch (the quote no longer checks)',
    ),
});

/** How a fact was reached from the seed entity. */
export const FoundBy = z.object({ seed: z.string(), hops: Count, reasoning: z.string().optional() });

/** A fact: a stored relation (`id`), or one derived from stored ones (`id: null`, `derived: true`). */
export const Fact = z.object({
  id: Id.nullable(),
  subject: z.string(),
  subject_id: Id,
  relation: z.string(),
  object: z.string(),
  object_id: Id,
  direction: z.enum(['outbound', 'inbound', 'derived']),
  derived: z.literal(true).optional(),
  rule: z.enum(['symmetric', 'inverse', 'transitive']).optional(),
  rests_on: z.array(Id).optional().describe('The stored facts a derived fact rests on'),
  attributes: AttributesOut,
  attributes_omitted: AttributesOmitted,
  valid_from: SentDate.nullable(),
  valid_to: SentDate.nullable(),
  recorded_at: Time,
  ended_at: Time.optional(),
  source_date: SentDate.nullable(),
  agent: z.string().optional().describe('The agent that asserted a stored fact'),
  citation: Citation,
  found_by: FoundBy,
});

/** `{state: "not_armed"}`: meaning search is not armed on this node. */
export const Meaning = z.object({ state: z.string() });

/** A note as it is stored: its current (or `as_of`) version. */
export const Note = z.object({
  id: Id,
  key: z.string(),
  value: z.unknown(),
  kind: z.enum(['user_preference', 'user_fact', 'task_state', 'decision']),
  visibility: z.enum(['user', 'task', 'agent']),
  taskId: z.string().optional(),
  private: z.boolean(),
  version: z.int().min(1),
  supersedes: z.int().nullable().describe('The version this one replaced'),
  agent: z.string(),
  createdAt: Time,
  updatedAt: Time,
  confidence: z.number().optional(),
  confidenceBasis: z.string().optional(),
});

/** Why a note matched a `query`: its channels, the rank in each and the fused score. */
export const Receipt = z.object({
  channels: z.array(z.string()),
  ranks: z.record(z.string(), z.int()),
  score: z.number(),
});

/** What an event is about, shaped like the request that names it (never the stored key form). */
export const EventTarget = z.union([
  z.object({ key: z.string(), visibility: z.string(), taskId: z.string().optional() }).describe('a note'),
  z.object({ name: z.string() }).describe('an entity'),
  z.object({ from: z.string(), type: z.string(), to: z.string() }).describe('a fact'),
  z.object({ doc_id: Id }).describe('a document'),
  z.object({ taskId: z.string() }).describe('a handoff'),
  z
    .object({
      form: z.string(),
      subject: z.string().optional(),
      key: z.string().optional(),
      from: z.string().optional(),
      type: z.string().optional(),
      to: z.string().optional(),
    })
    .describe('a forget, by its form'),
  z.object({ parts: z.array(z.string()) }).describe('a target of another shape, in its parts'),
]);

/** One immutable event of the history: who changed what, when, with the input. */
export const HistoryEvent = z.object({
  seq: Id,
  family: z.string().describe('note, entity, fact, document, forget, handoff'),
  target: EventTarget,
  op: z.string().describe('create, replace, merge, assert, end, restore, forget, import, …'),
  agent: z.string(),
  at: Time,
  before: z.unknown().optional(),
  after: z.unknown().optional(),
  patch: z.unknown().optional().describe('The input as sent'),
  redacted: z
    .enum(['private', 'forgotten'])
    .optional()
    .describe(
      'Why before, after and patch are null: the note was private (read without includePrivate, or on a node that does not allow private notes), or was forgotten by an older node',
    ),
});

/** A handoff capsule. */
export const Handoff = z.object({
  id: Id,
  taskId: z.string(),
  summary: z.string(),
  status: z.string().nullable(),
  from: z.string(),
  to: z.string().optional(),
  createdAt: Time,
  expiresAt: Time.optional(),
  decisions: z.array(z.unknown()),
  nextSteps: z.array(z.unknown()),
  artifacts: z.array(z.unknown()),
  blockers: z.array(z.unknown()),
});

/** Records by kind, as import counts them. */
export const KindCounts = z.object({
  entities: Count,
  facts: Count,
  documents: Count,
  notes: Count,
  handoffs: Count,
});
