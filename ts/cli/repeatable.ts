import { z } from 'zod';

import { VERBS, type VerbSpec } from '../protocol/verbs.js';

/** The verbs by tool name. */
const TOOLS = new Map<string, VerbSpec>(VERBS.flatMap((v) => (v.tool === null ? [] : [[v.tool, v] as const])));

/**
 * Whether a call of tool `name` with `args` may be sent again after its connection closed before
 * the reply, when it may already have run: a read, or a write the node applies once per
 * `idempotencyKey` (a repeat gets the first receipt back, marked `replayed`). Any other write
 * could be applied twice (a second note version, a second handoff, an edge asserted again), or
 * answer as if it had done nothing (a forget of what the first call forgot); so could a tool this
 * bridge does not know.
 */
export function repeatable(name: string, args: Record<string, unknown> | undefined): boolean {
  const verb = TOOLS.get(name);
  if (verb === undefined) return false;
  if (!verb.writes) return true;
  return (
    typeof args?.idempotencyKey === 'string' &&
    verb.input instanceof z.ZodObject &&
    'idempotencyKey' in verb.input.shape
  );
}
