import type { z } from 'zod';
import type { Store } from '../engine/store.js';

import { ApiError, requiredField, validationError } from '../protocol/errors.js';
import { fieldMeant } from '../protocol/field-meant.js';
import { isoToMs } from '../protocol/fields.js';
import { ILL_FORMED, illFormedPath, MAX_BODY_DEPTH, nfc, tooDeepPath } from '../protocol/unicode.js';
import type { Principal } from './identity.js';
import type { UserShare } from './user-share.js';

/** What the node knows about itself, for memory_status and whoami. */
export interface NodeInfo {
  version: string;
  startedAt: number;
  profile: 'lite';
  /** Whether private notes may be returned (`CAIRN_ALLOW_PRIVATE`). */
  allowPrivate: boolean;
}

/** Everything a service function needs besides the request: the store, the node, its user shares. */
export interface Service {
  store: Store;
  node: NodeInfo;
  /** Absent: no share (a user may make as many requests as its token). */
  share?: UserShare;
}

/** Parses `input` with `schema`; a failure is a VALIDATION_ERROR naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  // No body at all is an empty one; a JSON `null` is a body, and not an object (found by an
  // audit: it exported the default scope as if `{}` had been sent).
  if (input === undefined) input = {};
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ApiError('VALIDATION_ERROR', '(body): expected a JSON object', [
      { field: '(body)', message: 'expected a JSON object' },
    ]);
  }
  // Before anything walks it: a body nested thousands deep would exhaust the stack of every
  // recursive reader, and one past 128 levels cannot be stored readably (the engine's JSON limit).
  const deep = tooDeepPath(input, MAX_BODY_DEPTH);
  if (deep !== undefined) {
    const field = deep.length === 0 ? '(body)' : String(deep[0]);
    const message = `nests deeper than ${MAX_BODY_DEPTH} levels`;
    throw new ApiError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message }]);
  }
  // Before the schema: a lone surrogate inside free JSON (a note's value, attributes) would
  // otherwise reach the engine and fail as unreadable JSON, naming no field.
  const bad = illFormedPath(input);
  if (bad !== undefined) {
    const field = bad.length === 0 ? '(body)' : bad.map(String).join('.');
    throw new ApiError('VALIDATION_ERROR', `${field}: ${ILL_FORMED}`, [{ field, message: ILL_FORMED }]);
  }
  const r = schema.safeParse(input, { error: requiredField });
  if (!r.success) throw validationError(r.error, (path, key) => fieldMeant(schema, path, key));
  return r.data;
}

/** The body the engine gets: identity fields removed, `as_of` turned into milliseconds, `expiresAt` into a date-time. */
export function engineBody(input: object): Record<string, unknown> {
  const { user_id: _u, scope: _s, ...rest } = input as Record<string, unknown>;
  if (typeof rest.as_of === 'string') rest.as_of = isoToMs(rest.as_of);
  // The engine reads a handoff's expiry as an RFC 3339 date-time; a date alone is its first instant (UTC).
  if (typeof rest.expiresAt === 'string') rest.expiresAt = new Date(isoToMs(rest.expiresAt)).toISOString();
  return rest;
}

/**
 * `readableScopes` for the engine: of a token limited to scopes, only those. The engine names the
 * caller's other scopes where what it asked for is (`elsewhere` of recall, context and
 * handoff_resume) and reads only the caller's tenant and user; this keeps a scope the token may
 * not use out of them. The verbs' strict input schemas refuse the field from a client.
 */
export function readableScopes(p: Principal): { readableScopes?: string[] } {
  return p.token.scopes === undefined ? {} : { readableScopes: p.token.scopes.map(nfc) };
}

export type { Principal };
