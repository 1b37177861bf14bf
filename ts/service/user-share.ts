import { Name256 } from '../protocol/fields.js';
import { nfc } from '../protocol/unicode.js';
import type { Service } from './context.js';
import type { Principal } from './identity.js';

/**
 * One end user's share of a shared token's requests (`server/user-share.ts`): `charge` counts a
 * call of `verb` for `user` (named by the request's `field`) and throws RATE_LIMITED past it.
 */
export interface UserShare {
  charge(p: Principal, user: string, field: string, verb: string, input: unknown): void;
}

/**
 * Counts the call against the share of its end user when the token may act for several users and
 * the call names one (`X-Cairn-User`, else `user_id`): a token bound to a user, and calls that name
 * none (a team's agents), keep the token's whole limit. A name the schema will refuse is not counted.
 */
export function chargeUser(svc: Service, p: Principal, verb: string, raw: unknown): void {
  if (svc.share === undefined || p.token.user !== undefined) return;
  const body = typeof raw === 'object' && raw !== null ? (raw as { user_id?: unknown }) : {};
  const named = p.headerUser ?? (typeof body.user_id === 'string' ? body.user_id : undefined);
  if (named === undefined || !Name256.safeParse(named).success) return;
  svc.share.charge(p, nfc(named), p.headerUser !== undefined ? 'X-Cairn-User' : 'user_id', verb, raw);
}
