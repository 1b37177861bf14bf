import type { BindingStore } from '../native/index.js';
import { rethrow } from './errors.js';

/** The knowledge verbs the engine serves (DESIGN.md §2, without the `memory_` prefix). */
export type KnowledgeVerb =
  | 'status'
  | 'remember'
  | 'relate'
  | 'recall'
  | 'context'
  | 'forget'
  | 'delete_user'
  | 'export'
  | 'import';

/** Who is calling, as the node established it. `now` defaults to the wall clock. */
export interface Caller {
  tenant: string;
  user: string;
  scope: string;
  /** The agent the token names; recorded on every write. */
  agent: string;
  /** Milliseconds since the Unix epoch. */
  now?: number;
}

/**
 * A refusal the engine answered in the product's terms (DESIGN.md §3), e.g. a forget that found
 * nothing, with "did you mean" names in `details`.
 */
export interface Refusal {
  code: string;
  message: string;
  details?: unknown[];
}

/**
 * Runs one knowledge verb: the body crosses to the engine as one JSON buffer and the reply comes
 * back the same way, parsed. A reply carrying `error` is a refusal, returned for the service layer
 * to map; store failures reject with a `StoreError`.
 */
export async function callKnowledge(
  inner: BindingStore,
  verb: KnowledgeVerb,
  caller: Caller,
  body: unknown,
): Promise<Record<string, unknown>> {
  const request = Buffer.from(JSON.stringify(body ?? {}));
  const { now = Date.now(), ...who } = caller;
  const reply = await inner.knowledge(verb, { ...who, now }, request).catch(rethrow);
  return JSON.parse(reply.toString('utf8')) as Record<string, unknown>;
}

/**
 * Loads a whole export into an empty scope in one transaction (the engine's `load`): `lines` is
 * the export's records as JSON lines, one record a line, and crosses to the engine as they are.
 * The reply is `import`'s (`imported`, `unchanged`, `skipped` by line index, `not_reproduced`); a
 * scope that already holds knowledge is refused with `error.code` `VALIDATION_ERROR`.
 */
export async function loadKnowledge(
  inner: BindingStore,
  caller: Caller,
  lines: Uint8Array,
): Promise<Record<string, unknown>> {
  const { now = Date.now(), ...who } = caller;
  const body = Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength);
  const reply = await inner.knowledge('load', { ...who, now }, body).catch(rethrow);
  return JSON.parse(reply.toString('utf8')) as Record<string, unknown>;
}
