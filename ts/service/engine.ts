import { StoreError } from '../engine/errors.js';
import type { Caller, KnowledgeVerb } from '../engine/knowledge.js';
import type { NotesVerb } from '../engine/notes.js';
import type { Store } from '../engine/store.js';
import { ApiError, isErrorCode } from '../protocol/errors.js';
import type { Identity } from './identity.js';

type Reply = Record<string, unknown>;

/**
 * An engine refusal (`{error: {code, message, details}}`) as an ApiError; an engine code outside
 * DESIGN.md's list (e.g. INVALID_ARGUMENT) is a VALIDATION_ERROR.
 */
function refusal(reply: Reply): ApiError | null {
  const err = reply.error as { code?: unknown; message?: unknown; details?: unknown } | undefined;
  if (err === undefined || err === null || typeof err !== 'object') return null;
  const code = isErrorCode(err.code) ? err.code : 'VALIDATION_ERROR';
  const details = Array.isArray(err.details) ? err.details : [];
  return new ApiError(code, typeof err.message === 'string' ? err.message : code, details);
}

/**
 * The engine's refusal of an argument as DESIGN §3's validation error: its messages name the field
 * first (`cursor: …`, `attributes.valid_from must be …`), so that is the detail's field, and the
 * engine's "invalid argument: " prefix is dropped.
 */
function invalidArgument(message: string): ApiError {
  const text = message.replace(/^invalid argument: /, '');
  const named = /^([A-Za-z_][\w.[\]]*)(?::| must| is | holds| has)/.exec(text)?.[1];
  const detail = named !== undefined && text.startsWith(`${named}: `) ? text.slice(named.length + 2) : text;
  // `facts.relations[0].attributes.valid_to` is spelled as zod paths are: `facts.relations.0.…`.
  const field = named?.replace(/\[(\d+)\]/g, '.$1') ?? '(body)';
  return new ApiError('VALIDATION_ERROR', text, [{ field, message: detail }]);
}

/** What a call gets while the store takes no writes (`Store.health`; the cause is in the log and /health). */
const WRITES_STOPPED =
  'writes are stopped: the store could not write to its disk (full, or failing), or its files were removed; the node reopens the store by itself once it can (GET /health says why): retry later';

/** What a call that met a damaged page gets (`Store.health`; the node's log names the page). */
const DAMAGED =
  'the store is damaged: a page it needed failed its checksum; nothing was changed, and the operator runs `cairn database check` and restores the store from a backup';

/** A store failure in the product's terms; internals stay in the log, never in the reply. */
export function storeFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof StoreError) {
    if (err.code === 'INVALID_ARGUMENT') return invalidArgument(err.message);
    if (err.code === 'STORE_CLOSED') return new ApiError('UNAVAILABLE', 'the node is shutting down');
    if (err.code === 'STORE_FAILED') return new ApiError('UNAVAILABLE', WRITES_STOPPED, [], err);
    if (err.code === 'STORE_CORRUPT') return new ApiError('INTERNAL', DAMAGED, [], err);
  }
  return new ApiError('INTERNAL', 'internal error', [], err);
}

function callerOf(id: Identity): Caller {
  return { tenant: id.tenant, user: id.user, scope: id.scope, agent: id.agent };
}

/** The reply of one engine call; a refusal or store failure throws an ApiError. */
async function settle(call: () => Promise<Reply>): Promise<Reply> {
  let reply: Reply;
  try {
    reply = await call();
  } catch (err) {
    throw storeFailure(err);
  }
  const refused = refusal(reply);
  if (refused !== null) throw refused;
  return reply;
}

/** Runs a knowledge verb as `id`; a refusal or store failure throws an ApiError. */
export function knowledge(store: Store, verb: KnowledgeVerb, id: Identity, body: object): Promise<Reply> {
  return settle(() => store.knowledge(verb, callerOf(id), body));
}

/** Runs a notes-engine verb as `id`; a refusal or store failure throws an ApiError. */
export function notes(store: Store, verb: NotesVerb, id: Identity, body: object): Promise<Reply> {
  return settle(() => store.notes(verb, callerOf(id), body));
}
