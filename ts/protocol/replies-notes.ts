import { z } from 'zod';

import { Count, Handoff, HistoryEvent, Id, Note, Receipt, Time } from './reply-parts.js';

// The 200 replies of the notes and handoff verbs (DESIGN.md §2 "Reply shapes"; the notes engine
// builds them). Registered by name in `ts/server/reply-schemas.ts`.

const Cursor = z.string().nullable().describe('Pass back as `cursor` for the next page; null when done');
const Replayed = z
  .literal(true)
  .optional()
  .describe('A retry with the same idempotencyKey: the first receipt again, nothing stored this time');

/** memory_note_write: the receipt of the version written (or of the earlier one, on a retry). */
export const NoteWriteReply = z.object({
  id: Id,
  key: z.string(),
  version: z.int().min(1),
  evolution: z.enum(['created', 'replaced', 'merged']),
  supersedes: z.int().nullable(),
  visibility: Note.shape.visibility,
  taskId: z.string().optional(),
  private: z
    .literal(true)
    .optional()
    .describe(
      'The note written is private: hidden from reads without includePrivate (a write omitting private keeps it)',
    ),
  replayed: Replayed,
  unchanged: z
    .literal(true)
    .optional()
    .describe('The write left the note as it was: no new version, no event; `version` is the current one'),
  warnings: z
    .array(
      z.object({
        field: z.literal('key'),
        message: z.string(),
        notes: z
          .array(z.object({ key: z.string(), visibility: Note.shape.visibility, taskId: z.string().optional() }))
          .describe('The other notes at this key: send one back (visibility, taskId) to update it'),
      }),
    )
    .optional()
    .describe('Created a new note beside other notes at this key, which keep their values'),
});

/** memory_note_list; with `query`, each note has its retrieval `receipt`. */
/**
 * The caller's other scopes holding what an empty reply asked for, each with its count under
 * `counted` (the engine's `named_scopes` builds both verbs' replies).
 */
function elsewhere<K extends string>(counted: K, scopes: string) {
  return z.object({
    scopes: z
      .array(z.object({ scope: z.string() }).extend({ [counted]: Count } as Record<K, typeof Count>))
      .describe(scopes),
    more: z.literal(true).optional().describe('There may be more than listed (the check stops reading)'),
    hint: z.string(),
  });
}

export const NoteListReply = z.object({
  notes: z.array(Note.extend({ receipt: Receipt.optional() })),
  nextCursor: Cursor,
  did_you_mean: z
    .array(z.object({ key: z.string(), visibility: z.enum(['user', 'task', 'agent']), taskId: z.string().optional() }))
    .optional()
    .describe(
      'With no notes (first page): notes the `key` may name (another visibility or task, a near spelling), or ' +
        'task notes the `query` matches, which a list without their `taskId` leaves out; send one back (at most 3)',
    ),
  elsewhere: elsewhere(
    'notes',
    'At most 10, most first: notes there you could list with this request (a query: its filters)',
  )
    .optional()
    .describe(
      'With no notes (first page, no as_of; a query only when this scope holds none its filters admit): your ' +
        'other scopes (of your user and token) holding notes this request asks for: send `scope`',
    ),
});

/** memory_history and audit: events oldest first (audit: newest first). */
export const HistoryReply = z.object({
  events: z.array(HistoryEvent),
  nextCursor: Cursor,
  forgotten: z
    .object({ agent: z.string(), at: Time })
    .optional()
    .describe('A forgotten note (its events went with it): who forgot it and when'),
});

/** memory_handoff_create: the receipt of the capsule stored (or of the earlier one, on a retry). */
export const HandoffCreateReply = z.object({
  id: Id,
  taskId: z.string(),
  createdAt: Time,
  expiresAt: Time.optional(),
  to: z.string().optional(),
  replayed: Replayed,
  replaces: z
    .object({ id: Id, from: z.string(), createdAt: Time, to: z.string().optional() })
    .optional()
    .describe('The capsule a resume of the task returned until this one (its newest unexpired)'),
  warnings: z
    .array(
      z.object({
        field: z.string().describe('The request field warned about (`to`)'),
        message: z.string(),
        near: z
          .array(z.string())
          .describe('Known agents of your tenant near what was sent (case or ≤ 2 edits), at most 5'),
      }),
    )
    .optional()
    .describe('Stored as sent, but maybe not as meant: `to` names no agent a live token is bound to'),
});

/**
 * memory_handoff_resume: `resumed` (with `handoff`), `expired` (the newest expired one), `none`
 * (with `did_you_mean` when a stored task is spelled like it), or, without `taskId`, `listed` (the unexpired handoffs addressed to the caller;
 * when none, `elsewhere` names the caller's other scopes where some wait; with `taskId` and `none`, where that task waits).
 */
export const HandoffResumeReply = z.object({
  state: z.enum(['resumed', 'expired', 'none', 'listed']),
  handoff: Handoff.optional(),
  skippedExpired: z
    .array(z.object({ id: Id, expiredAt: Time }))
    .optional()
    .describe('Newer capsules that expired, newest first, at most 20'),
  skippedExpiredCount: Count.optional().describe('How many newer capsules expired (skippedExpired lists 20 at most)'),
  handoffs: z
    .array(
      Handoff.extend({
        superseded: z.literal(true).optional(),
        supersededBy: Id.optional().describe('The newer capsule of the task that resume {taskId} returns'),
      }),
    )
    .optional(),
  nextCursor: Cursor.optional().describe(
    'With handoffs (listed): pass back as `cursor` for the next page; null when done',
  ),
  taskId: z.string().optional(),
  id: Id.optional(),
  expiredAt: Time.optional(),
  did_you_mean: z
    .array(z.string())
    .optional()
    .describe('With none: tasks with handoffs spelled like `taskId` (at most 3)'),
  elsewhere: elsewhere('handoffs', 'At most 10: unexpired handoffs there for you (listed) or the task (none)')
    .optional()
    .describe(
      'With listed and no handoffs (first page), or none: your other scopes (of your user and token) where ' +
        'they wait: send `scope`',
    ),
});
