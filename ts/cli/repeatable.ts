import { randomUUID } from 'node:crypto';

import { z } from 'zod';

import { VERBS, type VerbSpec } from '../protocol/verbs.js';

/** The verbs by tool name. */
const TOOLS = new Map<string, VerbSpec>(VERBS.flatMap((v) => (v.tool === null ? [] : [[v.tool, v] as const])));

/** Whether `verb` is a write the node applies once per `idempotencyKey`. */
function takesKey(verb: VerbSpec): boolean {
  return verb.writes && verb.input instanceof z.ZodObject && 'idempotencyKey' in verb.input.shape;
}

/**
 * Whether a call of tool `name` with `args` may be sent again after its connection closed before
 * the reply, when it may already have run: a read, or a write the node applies once per
 * `idempotencyKey` (a repeat gets the first receipt back, marked `replayed`). Any other write
 * could be applied twice (an edge asserted again, a document ingested twice), or answer as if it
 * had done nothing (a forget of what the first call forgot); so could a tool this bridge does not
 * know.
 */
export function repeatable(name: string, args: Record<string, unknown> | undefined): boolean {
  const verb = TOOLS.get(name);
  if (verb === undefined) return false;
  if (!verb.writes) return true;
  return typeof args?.idempotencyKey === 'string' && takesKey(verb);
}

/**
 * The arguments of a call of tool `name` as the bridge sends them. A write that takes an
 * `idempotencyKey` and was sent none (models rarely send one) gets one of the bridge's, `added`:
 * `cairn-mcp:` and a random UUID (46 ASCII bytes, within the node's 1–256 printable bytes; the
 * key is the agent's own, so no other bridge's can collide with it). Then a re-send after a
 * cut-off connection replays the first receipt instead of writing a second version or capsule.
 */
export function keyed(
  name: string,
  args: Record<string, unknown> | undefined,
): { args: Record<string, unknown> | undefined; added?: string } {
  const verb = TOOLS.get(name);
  // Arguments missing or a key of any kind sent: the node answers them as they are.
  if (verb === undefined || !takesKey(verb) || args === undefined || 'idempotencyKey' in args) return { args };
  const added = `cairn-mcp:${randomUUID()}`;
  return { args: { ...args, idempotencyKey: added }, added };
}

/**
 * The result of a call the bridge keyed itself (`keyed`), without the receipt's `replayed`: a
 * replay there is the bridge's own re-send of the one call the model made, which the node ran
 * once, so the model gets the receipt of its write, not of a repeat that "stored nothing".
 */
export function unreplayed<T>(result: T): T {
  const body = (result as { structuredContent?: Record<string, unknown> }).structuredContent;
  if (body?.replayed !== true) return result;
  const { replayed: _, ...receipt } = body;
  return { ...result, structuredContent: receipt, content: [{ type: 'text', text: JSON.stringify(receipt) }] };
}
