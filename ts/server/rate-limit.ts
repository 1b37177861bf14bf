import { createHash } from 'node:crypto';

import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';
import { bearerToken } from './auth.js';

interface Bucket {
  current: number;
  start: number;
}

/**
 * The bucket a request is counted in: its bearer token (by the token's hash, never logged), read
 * as auth reads it, so every spelling of the header (`bearer`, extra spaces) shares one count
 * (found by an audit: each spelling had a fresh one); a request with no token, its address's.
 * It runs before auth (an onRequest hook), so an unknown token is counted too, in its own bucket.
 */
export function rateKey(req: FastifyRequest): string {
  const token = bearerToken(req);
  return token === undefined ? `ip:${req.ip}` : `token:${createHash('sha256').update(token).digest('base64url')}`;
}

/**
 * Per-token request counts (`CAIRN_RATE_LIMIT` a window of `windowMs`), one fixed window per key
 * from its first request, at most `cap` keys (the least recently seen dropped first). It is the
 * store of @fastify/rate-limit, which charges one unit per HTTP request before the route runs,
 * and `/v1/mcp` charges the other messages of a JSON-RPC batch with `charge`, so a batch of N
 * costs N, as N requests would.
 */
export class RateBuckets implements FastifyRateLimitStore {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly cap = 10_000,
  ) {}

  private bucket(key: string, now: number): Bucket {
    let b = this.buckets.get(key);
    if (b === undefined || b.start + this.windowMs <= now) b = { current: 0, start: now };
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > this.cap) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    return b;
  }

  /** The plugin's call: one more request for `key`, whether or not it is over the limit. */
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
    const now = Date.now();
    const b = this.bucket(key, now);
    b.current++;
    callback(null, { current: b.current, ttl: b.start + this.windowMs - now });
  }

  /** One store for every route (no route has its own limit). */
  child(): FastifyRateLimitStore {
    return this;
  }

  /**
   * Charges `n` more units to `req`'s bucket when they fit under the limit; otherwise charges
   * nothing and returns the RATE_LIMITED refusal (with the seconds to wait), so a refused batch
   * runs nothing and costs only the request the plugin already counted.
   */
  charge(req: FastifyRequest, n: number, now = Date.now()): { retryAfter: number; error: ApiError } | null {
    if (n <= 0) return null;
    const b = this.bucket(rateKey(req), now);
    if (b.current + n <= this.max) {
      b.current += n;
      return null;
    }
    const retryAfter = Math.max(1, Math.ceil((b.start + this.windowMs - now) / 1000));
    const left = Math.max(0, this.max - b.current);
    const message = `too many requests: a batch of ${n + 1} messages counts as ${n + 1} requests and this token has ${left} left this minute; retry in ${retryAfter} seconds`;
    return { retryAfter, error: new ApiError('RATE_LIMITED', message) };
  }

  /** A constructor for the plugin's `store` option that hands it this instance. */
  asStore(): FastifyRateLimitStoreCtor {
    const self = this;
    return function store() {
      return self;
    } as unknown as FastifyRateLimitStoreCtor;
  }
}
