import type { TokenRecord } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import { Name256 } from '../protocol/fields.js';
import { nfc } from '../protocol/unicode.js';
import { verbSpec } from '../protocol/verbs.js';

/** Who presented the request: the token's record and the identity headers sent with it. */
export interface Principal {
  token: TokenRecord;
  /** `X-Cairn-User`, when sent: it wins over the body. */
  headerUser?: string | undefined;
  /** `X-Cairn-Scope`, when sent: the connection's default scope. */
  headerScope?: string | undefined;
  /** An identity header whose bytes name no text (not UTF-8): refused before anything else. */
  headerError?: { field: string; message: string } | undefined;
}

/** The identity a verb runs as (DESIGN.md §1). */
export interface Identity {
  tenant: string;
  user: string;
  scope: string;
  agent: string;
}

function checkHeader(name: string, value: string | undefined): void {
  if (value === undefined) return;
  const r = Name256.safeParse(value);
  if (!r.success) {
    throw new ApiError('VALIDATION_ERROR', `${name}: ${r.error.issues[0]?.message ?? 'invalid'}`, [
      { field: name, message: r.error.issues[0]?.message ?? 'invalid' },
    ]);
  }
}

/** A 422 naming the identity header that could not be decoded, if one could not. */
function checkDecoded(p: Principal): void {
  if (p.headerError === undefined) return;
  const { field, message } = p.headerError;
  throw new ApiError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message }]);
}

function refuseUser(p: Principal, user: string, field: string): void {
  if (p.token.user !== undefined && nfc(user) !== nfc(p.token.user)) {
    throw new ApiError('FORBIDDEN', `${field}: this token may not act for that user`, [
      { field, message: `this token acts only for user ${JSON.stringify(p.token.user)}` },
    ]);
  }
}

function refuseScope(p: Principal, scope: string, field: string): void {
  if (p.token.scopes !== undefined && !p.token.scopes.map(nfc).includes(nfc(scope))) {
    throw new ApiError('FORBIDDEN', `${field}: this token may not use that scope`, [
      { field, message: `this token may use only the scopes ${p.token.scopes.join(', ')}` },
    ]);
  }
}

/**
 * A read-only token (role `reader`) calling a verb that writes: FORBIDDEN naming Authorization,
 * judged before the body (as a user or scope the token may not use), so nothing is written and a
 * malformed body teaches nothing about the verb's fields.
 */
export function refuseRole(p: Principal, verb: string): void {
  if (p.token.role !== 'reader' || verbSpec(verb)?.writes !== true) return;
  const message = `agent ${p.token.agent}'s token is read-only (role reader): ${verb} writes`;
  throw new ApiError('FORBIDDEN', `Authorization: ${message}`, [{ field: 'Authorization', message }]);
}

/**
 * What the principal alone decides, judged on the raw body before its shape is: a user or scope
 * the token may not use is FORBIDDEN even when the rest of the body is malformed, so a restricted
 * token learns nothing about a verb's fields by probing other users or scopes. Values that are not
 * strings are left to the schema (they are shape errors, not another user).
 */
export function preauthorize(p: Principal, raw: unknown): void {
  // A header naming no text cannot be judged against the token: refused as it is, body unread.
  checkDecoded(p);
  const body = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const userId = typeof body.user_id === 'string' ? body.user_id : undefined;
  const scope = typeof body.scope === 'string' ? body.scope : undefined;
  const user = p.headerUser ?? userId;
  if (user !== undefined) refuseUser(p, user, p.headerUser !== undefined ? 'X-Cairn-User' : 'user_id');
  const named = scope ?? p.headerScope;
  if (named !== undefined) refuseScope(p, named, scope !== undefined ? 'scope' : 'X-Cairn-Scope');
}

/**
 * The identity of one call: tenant and agent from the token; user from `X-Cairn-User` (a different
 * body `user_id` is refused), else `user_id`, else the token's user, else `default`; scope from the
 * body, else `X-Cairn-Scope`, else the first scope of a token limited to scopes, else `default`. A
 * user or scope the token does not allow → FORBIDDEN. `userField` is what a refusal calls the
 * user the request sent, as it sent it (`user` for the import route's query parameter).
 */
export function resolveIdentity(
  p: Principal,
  body: { user_id?: string | undefined; scope?: string | undefined },
  userField = 'user_id',
) {
  checkDecoded(p);
  checkHeader('X-Cairn-User', p.headerUser);
  checkHeader('X-Cairn-Scope', p.headerScope);
  if (p.headerUser !== undefined && body.user_id !== undefined && nfc(body.user_id) !== nfc(p.headerUser)) {
    throw new ApiError('VALIDATION_ERROR', `${userField}: differs from the X-Cairn-User header, which wins`, [
      { field: userField, message: 'differs from the X-Cairn-User header' },
    ]);
  }
  const user = nfc(p.headerUser ?? body.user_id ?? p.token.user ?? 'default');
  const scope = nfc(body.scope ?? p.headerScope ?? p.token.scopes?.[0] ?? 'default');
  refuseUser(p, user, p.headerUser !== undefined ? 'X-Cairn-User' : userField);
  refuseScope(p, scope, body.scope === undefined && p.headerScope !== undefined ? 'X-Cairn-Scope' : 'scope');
  const identity: Identity = { tenant: p.token.tenant, user, scope, agent: nfc(p.token.agent) };
  return identity;
}
