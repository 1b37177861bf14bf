import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';
import type { Principal } from '../service/identity.js';
import type { UserShare } from '../service/user-share.js';
import { exportPageRefund } from './export-page-cost.js';
import { FixedWindows } from './fixed-windows.js';
import { PARTS } from './rate-limit.js';

/**
 * One end user's share of a token's requests (`CAIRN_RATE_LIMIT_PER_USER` a window of `windowMs`,
 * a quarter of `CAIRN_RATE_LIMIT` by default), counted per token and user named by the call, one
 * fixed window per pair from its first call, at most `cap` pairs (the least recently seen dropped
 * first). An app serving its end users through one token names each by `X-Cairn-User` or
 * `user_id`; without a share one of them looping spent the token's minute and every other user
 * of the app got 429 until it ended. The token's own limit (`RateBuckets`) still bounds the sum.
 * An export continuation page costs what it costs the token (`export-page-cost.ts`).
 */
export class UserShares implements UserShare {
  private readonly counts: FixedWindows;
  /** Per request (its principal): the share it was held to with the fewest requests left (`heldTo`). */
  private readonly held = new WeakMap<Principal, RateState>();

  constructor(
    readonly max: number,
    private readonly tokenMax: number,
    windowMs: number,
    cap = 100_000,
  ) {
    this.counts = new FixedWindows(windowMs, cap);
  }

  charge(p: Principal, user: string, field: string, verb: string, input: unknown, now = Date.now()): void {
    const c = this.counts.at(`${p.token.id}\0${user}`, now);
    const parts = PARTS - exportPageRefund(verb, input);
    const reset = this.counts.secondsLeft(c, now);
    const fits = c.used + parts <= this.max * PARTS;
    if (fits) c.used += parts;
    const remaining = fits ? Math.max(0, Math.floor((this.max * PARTS - c.used) / PARTS)) : 0;
    const before = this.held.get(p);
    if (before === undefined || remaining < before.remaining) this.held.set(p, { limit: this.max, remaining, reset });
    if (fits) return;
    const retryAfter = reset;
    const message = `this user's share of the token's requests is spent this minute; retry in ${retryAfter} seconds`;
    const error = new ApiError(
      'RATE_LIMITED',
      `too many requests for this user: one user of a token that serves several may make ${this.max} of its ${this.tokenMax} requests a minute (CAIRN_RATE_LIMIT_PER_USER); retry in ${retryAfter} seconds`,
      [{ field, message }],
    );
    error.retryAfter = retryAfter;
    throw error;
  }

  /**
   * The share the request of `p` was held to with the fewest requests left (a batch may name
   * several users), if any: its `x-ratelimit-*` headers describe it when it has fewer left than
   * the token (`app.ts`), so a client backing off reads the limit it actually met.
   */
  heldTo(p: Principal): RateState | undefined {
    return this.held.get(p);
  }
}

/** A limit as the `x-ratelimit-*` headers state it: requests a window, left in it, seconds to its end. */
export interface RateState {
  limit: number;
  remaining: number;
  reset: number;
}

/**
 * An `onSend` hook's work: the request's `x-ratelimit-*` headers (the token's count, set by the
 * rate limit) replaced by those of the user share it was held to, when that has fewer left; a
 * share that refused the call has none left (found by a review: a call refused for its user's
 * share said the token had hundreds left).
 */
export function shareHeaders(share: UserShares, req: FastifyRequest, reply: FastifyReply): void {
  const held = req.principal === null ? undefined : share.heldTo(req.principal);
  if (held === undefined) return;
  const token = Number(reply.getHeader('x-ratelimit-remaining'));
  if (Number.isFinite(token) && token <= held.remaining) return;
  reply.header('x-ratelimit-limit', held.limit);
  reply.header('x-ratelimit-remaining', held.remaining);
  reply.header('x-ratelimit-reset', held.reset);
}
