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

/**
 * Who is calling, as the node established it. `now` defaults to the wall clock; the engine stamps a
 * call with it, or with the latest time it handed out when the clock is behind that (`clock.rs`).
 */
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
 * `caller` as the binding takes it, its clock read now when it carries none. Copied field by
 * field: a rest-and-spread copy (`{ ...who, now }`) cost ~1.5 µs a call on the event loop.
 */
export function clocked(caller: Caller): Required<Caller> {
  const { tenant, user, scope, agent } = caller;
  return { tenant, user, scope, agent, now: caller.now ?? Date.now() };
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
  const who = clocked(caller);
  const split = verb === 'remember' ? splitTexts(body) : undefined;
  let reply: Buffer;
  try {
    // A quick read answers at once (a Buffer, not a promise): see `BindingStore.knowledge`.
    reply = await (split
      ? inner.knowledgeTexts(verb, who, Buffer.from(JSON.stringify(split.body)), split.texts)
      : inner.knowledge(verb, who, Buffer.from(JSON.stringify(body ?? {}))));
  } catch (err) {
    rethrow(err);
  }
  return JSON.parse(reply.toString('utf8')) as Record<string, unknown>;
}

/** `String.prototype.isWellFormed` (Node 20 has it; the ES2023 library types do not). */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A plain object (what `JSON.stringify` writes as its own fields, no `toJSON`). */
function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !('toJSON' in value);
}

/**
 * A `remember` body whose passages' texts can cross to the engine beside the JSON instead of
 * inside it (`knowledgeTexts`): the body with each text left empty, and the texts in order.
 * Encoding the texts into JSON was most of this thread's work on a passage ingest. Only when
 * every passage is a plain object with a well-formed string `text` (a lone surrogate would be
 * escaped in JSON and refused by the engine, but replaced crossing N-API), so the engine sees
 * exactly what the JSON would have carried; otherwise `undefined`, and the body goes as JSON.
 */
function splitTexts(body: unknown): { body: Record<string, unknown>; texts: string[] } | undefined {
  if (!isPlain(body) || !Array.isArray(body.passages) || body.passages.length === 0) return undefined;
  const texts: string[] = [];
  const passages: Record<string, unknown>[] = [];
  for (const p of body.passages as unknown[]) {
    if (!isPlain(p) || typeof p.text !== 'string' || !isWellFormed(p.text)) return undefined;
    texts.push(p.text);
    passages.push({ ...p, text: '' });
  }
  return { body: { ...body, passages }, texts };
}

/**
 * Loads a whole export into an empty scope in one transaction (the engine's `load`): `lines` is
 * the export's records as JSON lines, one record a line, and the engine reads them where they
 * lie, uncopied: leave `lines` unchanged until the promise settles.
 * The reply is `import`'s (`imported`, `unchanged`, `skipped` by line index, `not_reproduced`); a
 * scope that already holds knowledge is refused with `error.code` `VALIDATION_ERROR` (its details
 * name the field `scope`). With `whole`, a line that fails its checks refuses the load, nothing is
 * stored, and the refusal's details name each such line (`{field: "line N", message}`).
 */
export async function loadKnowledge(
  inner: BindingStore,
  caller: Caller,
  lines: Uint8Array,
  whole = false,
): Promise<Record<string, unknown>> {
  const body = Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength);
  let reply: Buffer;
  try {
    reply = await inner.load(clocked(caller), body, whole);
  } catch (err) {
    rethrow(err);
  }
  return JSON.parse(reply.toString('utf8')) as Record<string, unknown>;
}
