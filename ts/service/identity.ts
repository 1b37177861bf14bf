import type { TokenRecord } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import { Name256 } from '../protocol/fields.js';

/** Who presented the request: the token's record and the identity headers sent with it. */
export interface Principal {
  token: TokenRecord;
  /** `X-Cairn-User`, when sent: it wins over the body. */
  headerUser?: string | undefined;
  /** `X-Cairn-Scope`, when sent: the connection's default scope. */
  headerScope?: string | undefined;
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

/**
 * The identity of one call: tenant and agent from the token; user from `X-Cairn-User` (a different
 * body `user_id` is refused), else `user_id`, else the token's user, else `default`; scope from the
 * body, else `X-Cairn-Scope`, else the first scope of a token limited to scopes, else `default`. A
 * user or scope the token does not allow → FORBIDDEN.
 */
export function resolveIdentity(p: Principal, body: { user_id?: string | undefined; scope?: string | undefined }) {
  checkHeader('X-Cairn-User', p.headerUser);
  checkHeader('X-Cairn-Scope', p.headerScope);
  if (p.headerUser !== undefined && body.user_id !== undefined && body.user_id !== p.headerUser) {
    throw new ApiError('VALIDATION_ERROR', 'user_id: differs from the X-Cairn-User header, which wins', [
      { field: 'user_id', message: 'differs from the X-Cairn-User header' },
    ]);
  }
  const user = p.headerUser ?? body.user_id ?? p.token.user ?? 'default';
  const scope = body.scope ?? p.headerScope ?? p.token.scopes?.[0] ?? 'default';
  if (p.token.user !== undefined && user !== p.token.user) {
    throw new ApiError('FORBIDDEN', 'this token may not act for that user');
  }
  if (p.token.scopes !== undefined && !p.token.scopes.includes(scope)) {
    throw new ApiError('FORBIDDEN', 'this token may not use that scope');
  }
  const identity: Identity = { tenant: p.token.tenant, user, scope, agent: p.token.agent };
  return identity;
}
