import { z } from 'zod';

import { IsoDate, identityFields, text, words } from './fields.js';

const KiB = 1024;

/** memory_query: bounded multi-step retrieval (docs/design/query.md). */
export const QueryInput = z.strictObject({
  ...identityFields,
  query: words(4 * KiB).describe('The question; split on conjunctions (and, or, und, 以及, 或者 …) when no subqueries'),
  subqueries: z
    .array(words(4 * KiB))
    .min(1)
    .max(16)
    .optional()
    .describe('Explicit steps, run in order instead of splitting the query'),
  includeHistory: z
    .boolean()
    .optional()
    .describe(
      'Add the history of the notes and entities reached, within what the pack left of tokenBudget (else ' +
        '8,000 tokens); events that do not fit are left out and counted',
    ),
  maxSteps: z.int().min(1).max(8).optional().describe('At most this many steps (default 4)'),
  timeoutMs: z.int().min(1).max(60_000).optional().describe('Stop waiting after this long (default 5000)'),
  minEvidence: z
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe('Evidence items needed for `sufficient` (default 2, or `k` when `k` is 1)'),
  hops: z.int().min(0).max(3).optional(),
  k: z.int().min(1).max(100).optional().describe('Items per step (default 8)'),
  as_of: IsoDate.optional(),
  valid_at: IsoDate.optional(),
  compact: z
    .boolean()
    .optional()
    .describe('Drop the quoted text from citations (keep `start`/`end`) and before/after from history events'),
  includePrivate: z
    .boolean()
    .optional()
    .describe("Let private notes compete in each step: every agent's of this user (when the node allows them)"),
  taskId: text(256).optional().describe("Let the task's notes (visibility task) compete in each step"),
  tokenBudget: z.int().min(32).max(1_000_000).optional(),
  maxItems: z.int().min(1).max(100).optional(),
  purpose: z.enum(['general', 'coding', 'research', 'browser']).optional(),
});
