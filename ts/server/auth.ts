import type { FastifyReply, FastifyRequest } from 'fastify';

import { expired, type Tokens } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import { decodeIdentityHeader } from '../protocol/identity-header.js';
import type { Principal } from '../service/identity.js';
import type { AuthFailures } from './auth-failures.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** Where a request refused for want of a valid token is counted (`app.ts`). */
    authFailures: AuthFailures;
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Whether the request carries header `name` more than once (`rawHeaders` keeps each line). */
function repeated(req: FastifyRequest, name: string): boolean {
  const raw = req.raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name.toLowerCase() && ++seen > 1) return true;
  return false;
}

/** The identity headers, as `Principal` holds them once decoded (docs/api.md, "Identity"). */
const IDENTITY_HEADERS = [
  ['X-Cairn-User', 'headerUser'],
  ['X-Cairn-Scope', 'headerScope'],
] as const;

/**
 * The token of the request's `Authorization: Bearer <token>` header (the scheme in any case, any
 * whitespace around the token), or undefined. The one reading of the header: the rate limit
 * (`rate-limit.ts`) counts by the same token auth accepts, so no spelling of it gets a fresh count.
 */
export function bearerToken(req: FastifyRequest): string | undefined {
  const auth = header(req, 'authorization');
  return auth === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(auth)?.[1];
}

/** UNAUTHENTICATED with `message`, counted against the request's address (RATE_LIMITED past its limit). */
function unauthenticated(req: FastifyRequest, message: string): ApiError {
  return req.server.authFailures.refuse(req.ip, new ApiError('UNAUTHENTICATED', message));
}

/** The principal of a request with a valid bearer token; UNAUTHENTICATED otherwise. */
export function authenticate(tokens: Tokens, req: FastifyRequest): Principal {
  const token = bearerToken(req);
  if (token === undefined) throw unauthenticated(req, 'send a bearer token: Authorization: Bearer <token>');
  const record = tokens.verify(token);
  if (record === null) throw unauthenticated(req, 'the token is unknown or revoked');
  // Checked on every request, so a session or connection opened before the expiry stops with it.
  if (expired(record)) throw unauthenticated(req, `the token expired at ${record.expiresAt}`);
  const p: Principal = { token: record };
  for (const [name, key] of IDENTITY_HEADERS) {
    const raw = header(req, name.toLowerCase());
    if (raw === undefined) continue;
    // Node joins a repeated header into "alice, bob": a client naming two users or scopes
    // contradicts itself, and the joined text is no name it sent.
    if (repeated(req, name)) {
      p.headerError ??= { field: name, message: 'sent more than once: send one value' };
      continue;
    }
    const decoded = decodeIdentityHeader(raw);
    if (decoded.ok) p[key] = decoded.value;
    // Refused when the identity is resolved (422 naming the header), as any other bad header value.
    else p.headerError ??= { field: name, message: decoded.message };
  }
  return p;
}

/** An onRequest hook: authenticates before the body is read. */
export function authHook(tokens: Tokens) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    req.principal = authenticate(tokens, req);
  };
}

/** The refusal of a token that is not an admin's on an admin route, naming whose it is. */
function notAdmin(p: Principal): ApiError {
  const message = `this is agent ${p.token.agent}'s token (role ${p.token.role}); this route needs an admin token`;
  return new ApiError('FORBIDDEN', `Authorization: ${message}`, [{ field: 'Authorization', message }]);
}

/** An onRequest hook for admin routes: an admin token or FORBIDDEN. */
export function adminHook(tokens: Tokens) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const p = authenticate(tokens, req);
    if (p.token.role !== 'admin') throw notAdmin(p);
    req.principal = p;
  };
}

/**
 * An onRequest hook for the store-wide admin routes (tokens, check, backup, compact): an admin
 * token with no user and no scope limit, or FORBIDDEN. These routes are not bound to one user and
 * scope, so a limit on the token could not be applied to them; a limited admin token could
 * otherwise mint an unlimited one, list or revoke every token, or copy every user's data.
 */
export function storeAdminHook(tokens: Tokens) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const p = authenticate(tokens, req);
    if (p.token.role !== 'admin') throw notAdmin(p);
    const limits = [
      ...(p.token.user === undefined ? [] : [`user ${JSON.stringify(p.token.user)}`]),
      ...(p.token.scopes === undefined ? [] : [`scopes ${p.token.scopes.join(', ')}`]),
    ];
    if (limits.length > 0) {
      const message = `this admin token is limited to ${limits.join(' and ')}; this route acts on the whole store and needs an admin token with no user or scope limit`;
      throw new ApiError('FORBIDDEN', `Authorization: ${message}`, [{ field: 'Authorization', message }]);
    }
    req.principal = p;
  };
}

/** The principal set by `authHook` (routes that use it always have one). */
export function principalOf(req: FastifyRequest): Principal {
  if (req.principal === null) throw new ApiError('UNAUTHENTICATED', 'send a bearer token');
  return req.principal;
}
