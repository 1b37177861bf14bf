import { ApiError } from '../protocol/errors.js';
import { FixedWindows } from './fixed-windows.js';

/**
 * Requests refused for want of a valid token (none, unknown, revoked, expired), counted per remote
 * address (`CAIRN_RATE_LIMIT` a window of `windowMs`, one fixed window per address from its first
 * failure, at most `cap` addresses, the least recently seen dropped first). A table of their own:
 * the tokens' counts (`RateBuckets`) hold only tokens that verified, since each route's auth hook
 * runs before the rate limit's, so no flood of made-up tokens can displace a token's count; and
 * without this table those floods were not counted at all. Past the limit an address's failures
 * are 429 with `Retry-After`; a valid token from the same address is never refused here.
 */
export class AuthFailures {
  private readonly counts: FixedWindows;

  constructor(
    readonly max: number,
    windowMs: number,
    cap = 10_000,
  ) {
    this.counts = new FixedWindows(windowMs, cap);
  }

  /** Counts one failure from `address`: `refusal` within the limit, RATE_LIMITED past it. */
  refuse(address: string, refusal: ApiError, now = Date.now()): ApiError {
    const c = this.counts.at(address, now);
    c.used++;
    if (c.used <= this.max) return refusal;
    const retryAfter = this.counts.secondsLeft(c, now);
    const error = new ApiError(
      'RATE_LIMITED',
      `too many requests without a valid token from this address (${this.max} a minute, CAIRN_RATE_LIMIT): ${refusal.message}; retry in ${retryAfter} seconds`,
    );
    error.retryAfter = retryAfter;
    return error;
  }
}
