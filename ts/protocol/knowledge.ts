import { z } from 'zod';

import { Attributes, Id, IsoDate, identityFields, name, text, words } from './fields.js';

// One strict schema per knowledge verb (DESIGN.md §2): the single source of the MCP tool input,
// the HTTP body check, the OpenAPI document and the TS types. Unknown fields are refused.

const NAME = name(1024);
const KiB = 1024;
const MiB = 1024 * KiB;

/** The most an export page may hold before it ends (the engine's `PAGE_BYTES`). */
export const EXPORT_MAX_BYTES = 4 * MiB;
/**
 * Where an export page ends unless a caller asks otherwise: about 16,000 tokens, a page a model
 * can read (found by an audit: default pages of 215 KB, and 1.5 MB for one holding a document).
 * A program exporting a scope asks for `EXPORT_MAX_BYTES`.
 */
export const EXPORT_DEFAULT_BYTES = 64 * KiB;

/** memory_status: node health and the caller's scopes; with `scope`, that scope's ontology. */
export const StatusInput = z.strictObject({ ...identityFields });

// A turn is cut into passages like `content` (never joined with another turn), so only the call's
// 1 MiB of text bounds it, as DESIGN §2 says; the engine checks the sum over turns.
const Message = z.strictObject({ role: text(64), content: text(MiB, 0) });
const Passage = z.strictObject({
  text: text(64 * KiB),
  mentions: z.array(NAME).max(1000),
  key: text(512).optional(),
});
const Entity = z.strictObject({ name: NAME, type: NAME, attributes: Attributes.optional() });
const Relation = z.strictObject({ source: NAME, target: NAME, type: NAME, attributes: Attributes.optional() });
const Facts = z.strictObject({
  entities: z.array(Entity).max(1000).default([]),
  relations: z.array(Relation).max(5000).default([]),
});

/** memory_remember: text (`content`, `messages` or `passages`) and/or `facts`. */
export const RememberInput = z
  .strictObject({
    ...identityFields,
    content: text(MiB).optional(),
    messages: z.array(Message).min(1).max(10_000).optional(),
    passages: z.array(Passage).min(1).max(1000).optional(),
    facts: Facts.optional(),
    date: IsoDate.optional(),
    source: text(1024).optional(),
  })
  .superRefine((b, ctx) => {
    const forms = (['content', 'messages', 'passages'] as const).filter((f) => b[f] !== undefined);
    if (forms.length > 1) {
      ctx.addIssue({ code: 'custom', path: [forms[1] ?? ''], message: `send one of ${forms.join(', ')}, not both` });
    }
    if (forms.length === 0 && b.facts === undefined) {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'send content, messages, passages or facts' });
    } else if (forms.length === 0 && b.facts?.entities.length === 0 && b.facts.relations.length === 0) {
      // An empty `facts` alone stores nothing: answered `already` before (found by an audit), as if it had.
      const message = 'holds no entities or relations: send some, or content, messages or passages';
      ctx.addIssue({ code: 'custom', path: ['facts'], message });
    }
  });

/** memory_relate: one typed edge `from` → `to`. */
export const RelateInput = z.strictObject({
  ...identityFields,
  from: NAME,
  to: NAME,
  type: NAME,
  attributes: Attributes.optional(),
  replaces: z.boolean().optional(),
  date: IsoDate.optional(),
  source: text(1024).optional(),
});

const AttributeMatch = z.strictObject({ key: NAME, value: z.union([z.string(), z.number(), z.boolean()]) });

/** memory_recall: everything about one entity, by name or by attribute. */
export const RecallInput = z
  .strictObject({
    ...identityFields,
    subject: NAME.optional(),
    attribute: AttributeMatch.optional(),
    as_of: IsoDate.optional(),
    valid_at: IsoDate.optional(),
    k: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('Most facts returned (default 50, at most 1000), newest first; `omitted` counts the rest'),
    hops: z.int().min(1).max(3).optional().describe('How far to walk from the subject (default 1)'),
    compact: z.boolean().optional(),
    cursor: text(KiB).optional(),
  })
  .superRefine((b, ctx) => {
    if ((b.subject === undefined) === (b.attribute === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['subject'], message: 'send exactly one of subject or attribute' });
    }
  });

/** memory_context: ranked, cited items for a question, with a grounding verdict. */
export const ContextInput = z.strictObject({
  ...identityFields,
  question: words(4 * KiB),
  hops: z.int().min(0).max(3).optional(),
  k: z.int().min(1).max(100).optional(),
  as_of: IsoDate.optional(),
  valid_at: IsoDate.optional(),
  compact: z.boolean().optional(),
  includePrivate: z
    .boolean()
    .optional()
    .describe("Let private notes compete too: every agent's of this user (when the node allows them)"),
  taskId: text(256).optional().describe("Let the task's notes (visibility task) compete too"),
  tokenBudget: z.int().min(32).max(1_000_000).optional(),
  maxItems: z.int().min(1).max(100).optional(),
  purpose: z.enum(['general', 'coding', 'research', 'browser']).optional(),
});

const FactRef = z.union([z.strictObject({ id: Id }), z.strictObject({ from: NAME, to: NAME, type: NAME })]);
const NoteRef = z.strictObject({
  key: text(512),
  visibility: z.enum(['user', 'task', 'agent']).optional(),
  taskId: text(256)
    .optional()
    .describe('The task of a task note; alone it means visibility task; not with user or agent'),
});
const HandoffRef = z.strictObject({
  taskId: text(256).describe('The task whose handoffs go: every capsule on it, expired ones too, and their events'),
});
/** The forms of memory_forget, of which a body sends exactly one. */
export const FORGET_FORMS = ['subject', 'fact', 'passage', 'source', 'attribute', 'note', 'handoff', 'all'] as const;

/** The refusal of a memory_forget body that sends the forms `given`, not one: the field named and what it is told. */
export function formsIssue(given: readonly string[]): { field: string; message: string } {
  return {
    field: given[1] ?? 'subject',
    message: `send exactly one of ${FORGET_FORMS.join(', ')}${given.length > 1 ? ` (got ${given.join(', ')})` : ''}`,
  };
}

/** memory_forget: exactly one of the forms. */
export const ForgetInput = z
  .strictObject({
    ...identityFields,
    subject: NAME.optional(),
    fact: FactRef.optional(),
    passage: Id.optional(),
    source: text(1024).optional(),
    attribute: z.strictObject({ subject: NAME, key: NAME }).optional(),
    note: NoteRef.optional(),
    handoff: HandoffRef.optional(),
    all: z.literal(true).optional(),
  })
  .superRefine((b, ctx) => {
    const given = FORGET_FORMS.filter((f) => b[f] !== undefined);
    if (given.length !== 1) {
      const { field, message } = formsIssue(given);
      ctx.addIssue({ code: 'custom', path: [field], message });
    }
  });

/** memory_export: one page of the scope's records. */
export const ExportInput = z.strictObject({
  ...identityFields,
  cursor: text(4 * KiB).optional(),
  limit: z.int().min(1).max(5000).optional(),
  maxBytes: z
    .int()
    .min(KiB)
    .max(EXPORT_MAX_BYTES)
    .optional()
    .describe('A page’s records fit in this many bytes of JSON (default 65536; one larger comes alone)'),
  includePrivate: z
    .boolean()
    .optional()
    .describe('Export private notes too (when the node allows them); otherwise the header counts them as withheld'),
});

/** memory_import: records from an export page, into the caller's scope. */
export const ImportInput = z.strictObject({
  ...identityFields,
  records: z.array(z.record(z.string(), z.unknown())).max(5000),
});

/** delete_user: every scope of the caller's user. `confirm` guards against a stray call. */
export const DeleteUserInput = z.strictObject({
  user_id: identityFields.user_id,
  confirm: z.literal(true, { error: 'send confirm: true to delete every scope of this user' }),
});

/** audit: the calling agent's own events, paged. */
export const AuditInput = z.strictObject({
  ...identityFields,
  cursor: text(4 * KiB).optional(),
  limit: z.int().min(1).max(100).optional(),
  newestFirst: z.boolean().optional().describe('The latest events first, pages going back in time'),
});
