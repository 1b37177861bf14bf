import type { BindingStore } from '../native/index.js';
import { rethrow } from './errors.js';
import { type Caller, clocked } from './knowledge.js';

/** The notes and handoff verbs the engine serves (DESIGN.md §2, without the `memory_` prefix). */
export type NotesVerb =
  | 'note_write'
  | 'note_list'
  | 'note_forget'
  | 'history'
  | 'audit'
  | 'handoff_create'
  | 'handoff_resume'
  | 'handoff_forget';

/**
 * Runs one notes verb: the body crosses to the engine as one JSON buffer and the reply comes back
 * the same way, parsed. The body carries DESIGN.md's fields plus the node's policy
 * (`allowPrivate`); identity travels in `caller`, never in the body. A reply carrying `error` is a
 * refusal (`VALIDATION_ERROR`, `VERSION_CONFLICT`, `IDEMPOTENCY_CONFLICT`, `NOT_FOUND`), returned
 * for the service layer to map; store failures reject with a `StoreError`.
 */
export async function callNotes(
  inner: BindingStore,
  verb: NotesVerb,
  caller: Caller,
  body: unknown,
): Promise<Record<string, unknown>> {
  const request = Buffer.from(JSON.stringify(body ?? {}));
  let reply: Buffer;
  try {
    // A quick call (a list of one key) answers at once; the rest answer a promise.
    reply = await inner.notes(verb, clocked(caller), request);
  } catch (err) {
    rethrow(err);
  }
  return JSON.parse(reply.toString('utf8')) as Record<string, unknown>;
}
