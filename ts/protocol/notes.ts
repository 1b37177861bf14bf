import { z } from 'zod';

import { AgentName } from './admin.js';
import { Id, IsoDate, identityFields, name, text } from './fields.js';

// One strict schema per notes and handoff verb (DESIGN.md §2, "Notes and handoffs"). The notes
// engine re-checks every rule; these make the tool schemas and OpenAPI say what it accepts.

const KiB = 1024;
const Key = name(512).describe('The note key, 1–512 bytes, not blank, e.g. "preferred_language"');
const Visibility = z
  .enum(['user', 'task', 'agent'])
  .describe('user: every agent of the user; task: callers sending the same taskId; agent: only you');
const TaskId = name(256).describe('The task the note or handoff belongs to');
// Naming a note: a taskId alone means visibility task; beside user or agent it is refused.
const NoteTaskId = TaskId.describe('The task of a task note; alone it means visibility task; not with user or agent');
const Kind = z.enum(['user_preference', 'user_fact', 'task_state', 'decision']);
const Cursor = text(4 * KiB).describe('The nextCursor of the previous page');
// One key space per agent, shared by note_write and handoff_create: a key names one request.
const IdempotencyKey = name(256)
  .optional()
  .describe(
    'Per agent, for 24 h by default: the same request again returns the first receipt (replayed: true), ' +
      'writing nothing. `cairn mcp` adds one when none is sent',
  );

/** memory_note_write: one note, versioned, with compare-and-set and idempotency. */
export const NoteWriteInput = z.strictObject({
  ...identityFields,
  key: Key,
  value: z
    .unknown()
    .refine((v) => v !== undefined && v !== null, 'required: any JSON value but null (use memory_forget to remove)')
    .describe('Any JSON value but null, ≤ 64 KiB serialised')
    // Typed in the schema: a client that reads a schema without `type` as a string (an audit: Codex's
    // sanitiser) would send an object as JSON text.
    .meta({ anyOf: ['object', 'array', 'string', 'number', 'boolean'].map((type) => ({ type })) }),
  kind: Kind.optional().describe('Required when the write creates the note; kept when omitted later'),
  visibility: Visibility.optional(),
  taskId: NoteTaskId.optional(),
  private: z
    .boolean()
    .optional()
    .describe(
      'Hide the note from every read that does not send includePrivate (only on a node that allows private notes); omitted keeps the current flag',
    ),
  writeMode: z
    .enum(['replace', 'merge'])
    .optional()
    .describe('replace (default), or merge (RFC 7396 merge patch; `null` deletes a key)'),
  expectedVersion: z.int().min(0).optional().describe('Write only if the note is at this version (0: only if absent)'),
  idempotencyKey: IdempotencyKey,
  confidence: z.number().min(0).max(1).optional(),
  confidenceBasis: z.enum(['user_asserted', 'agent_inferred', 'source_supported']).optional(),
  userConfirmed: z.boolean().optional(),
});

/** memory_note_list: current notes by filters or a hybrid query, paged. */
export const NoteListInput = z.strictObject({
  ...identityFields,
  key: Key.optional(),
  kind: Kind.optional(),
  visibility: Visibility.optional(),
  taskId: TaskId.optional().describe("Only this task's notes (visibility task); not with visibility user or agent"),
  query: text(4 * KiB)
    .optional()
    .describe('Words to search keys and values for: notes best first, each with a retrieval receipt'),
  limit: z.int().min(1).max(100).optional().describe('Notes per page, default 20'),
  cursor: Cursor.optional(),
  as_of: IsoDate.optional(),
  includePrivate: z
    .boolean()
    .optional()
    .describe("List private notes too, every agent's of this user (only when the node allows them)"),
});

/** memory_history: the events of one note, entity or fact, oldest (or newest) first, paged. */
export const HistoryInput = z.strictObject({
  ...identityFields,
  key: Key.optional(),
  visibility: Visibility.optional(),
  taskId: NoteTaskId.optional(),
  subject: name(1024).optional(),
  fact: z
    .strictObject({
      id: Id.optional(),
      from: name(1024).optional(),
      to: name(1024).optional(),
      type: name(1024).optional(),
    })
    .superRefine((f, ctx) => {
      const ends = [f.from, f.to, f.type].filter((v) => v !== undefined).length;
      if (f.id === undefined ? ends !== 3 : ends !== 0) {
        ctx.addIssue({ code: 'custom', message: 'send {id} (as recall and relate give it) or {from, to, type}' });
      }
    })
    .optional()
    .describe('One fact: {id} as recall and relate give it, or {from, to, type}'),
  cursor: Cursor.optional(),
  limit: z.int().min(1).max(100).optional().describe('Events per page, default 20 (fewer past 32 KB)'),
  includePrivate: z
    .boolean()
    .optional()
    .describe('Show the values of events of private notes (only when the node allows them)'),
  compact: z.boolean().optional().describe('Leave out each event’s before/after; keep op and patch'),
  // Described in the tool's text, where "Oldest first" is said: a long history's latest changes.
  newestFirst: z.boolean().optional(),
});

// `null` is taken as absent (no items), for clients that send null for "none": the engine stores
// absent, null and [] alike.
const Items = z
  .array(z.union([text(4 * KiB), z.record(z.string(), z.unknown())]))
  .max(100)
  .nullable();

/** memory_handoff_create: a capsule for whoever picks the task up next. */
export const HandoffCreateInput = z.strictObject({
  ...identityFields,
  taskId: TaskId,
  summary: text(16 * KiB),
  status: text(256).optional(),
  decisions: Items.optional(),
  nextSteps: Items.optional(),
  artifacts: Items.optional(),
  blockers: Items.optional(),
  expiresAt: IsoDate.optional().describe('When the handoff stops being resumed; must be in the future'),
  // An agent name as tokens bind them: a name no token can hold would reach nobody.
  to: AgentName.optional().describe('The agent the handoff is addressed to (letters, digits, ".", "_", "-")'),
  idempotencyKey: IdempotencyKey,
});

/** memory_handoff_resume: the newest unexpired capsule of a task, or those addressed to you. */
export const HandoffResumeInput = z.strictObject({
  ...identityFields,
  taskId: TaskId.optional(),
  limit: z
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe('Without taskId: how many handoffs addressed to you, default 20; refused with taskId'),
  cursor: Cursor.optional().describe('Without taskId: the nextCursor of the previous page; refused with taskId'),
});
