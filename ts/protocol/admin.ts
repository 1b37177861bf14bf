import { isAbsolute } from 'node:path';

import { z } from 'zod';

import { Scope, UserId } from './fields.js';

/** A token's roles (`auth/tokens.ts` `Role`): `reader` runs only the verbs that write nothing. */
export const ROLES = ['admin', 'agent', 'reader'] as const;

/** An agent name: what the token's writes are recorded as. */
export const AgentName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, ".", "_" or "-", at most 128, e.g. "claude"');

/**
 * The note operations an admin token may run as another agent (`POST
 * /v1/admin/agents/{agent}/memory/<verb>`), each with the body field that keeps it to notes.
 */
export const AS_AGENT_VERBS = [
  { verb: 'note_list', needs: null },
  { verb: 'history', needs: 'key' },
  { verb: 'forget', needs: 'note' },
  { verb: 'audit', needs: null },
] as const;

/** POST /v1/admin/tokens: a new token naming its agent, optionally fixed to a user and scopes. */
export const TokenCreateInput = z.strictObject({
  agent: AgentName,
  user: UserId.optional(),
  scopes: z
    .array(Scope)
    .min(1, 'give at least one scope, or leave scopes out for a token that may use every scope')
    .max(256)
    .optional()
    .describe('The only scopes the token may use; absent: every scope (an empty list is refused)'),
  role: z.enum(ROLES).optional(),
  expiresAt: z.iso
    .datetime({ offset: true })
    .refine((t) => Date.parse(t) > Date.now(), 'must be in the future')
    .optional()
    .describe('When the token stops working (RFC 3339); absent: never'),
});

/** POST /v1/admin/database/backup: where on the node's machine the copy goes. */
export const BackupInput = z.strictObject({
  dest: z
    .string()
    .min(1)
    .max(4096)
    .refine(isAbsolute, 'an absolute path on the node’s machine (the CLI sends one)')
    .describe('A directory that holds no store yet (created if missing)'),
});

/** POST /v1/admin/database/compact. */
export const CompactInput = z.strictObject({
  purge: z.boolean().optional().describe('Also zero the freed space and the log: forgotten data leaves the disk'),
});
