import { createHash } from 'node:crypto';

import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';
import { bearerToken } from './auth.js';
import { FixedWindows } from './fixed-windows.js';

/** A request is counted as this many parts, so a refund can leave a fraction of one charged. */
export const PARTS = 16;

/**
 * The bucket a request is counted in: its bearer token (by the token's hash, never logged), read
 * as auth reads it, so every spelling of the header (`bearer`, extra spaces) shares one count
 * (found by an audit: each spelling had a fresh one). It runs after each route's auth hook, so
 * only a token that verified is ever counted here: a request refused for want of one is counted
 * by its address in a table of its own (`AuthFailures`), so made-up tokens, however many, never
 * displace a token's count. (No counted route lets a request without a token reach the count; if
 * one did, it would be its address's.)
 * A token's `/v1/admin/` requests have a bucket of their own: the operator's administration
 * (revoking a token, a backup) is never refused because agents given the same token (the one a
 * first start prints) spent its minute on memory calls, nor the agents because of a backup script.
 */
export function rateKey(req: FastifyRequest): string {
  const token = bearerToken(req);
  if (token === undefined) return `ip:${req.ip}`;
  const kind = req.url.startsWith('/v1/admin/') ? 'admin' : 'token';
  return `${kind}:${createHash('sha256').update(token).digest('base64url')}`;
}

/**
 * Per-token request counts (`CAIRN_RATE_LIMIT` a window of `windowMs`), one fixed window per key
 * from its first request, at most `cap` keys (the least recently seen dropped first). It is the
 * store of @fastify/rate-limit, which charges one unit per HTTP request before the route runs,
 * and `/v1/mcp` charges the other messages of a JSON-RPC batch with `charge`, so a batch of N
 * costs N, as N requests would. An export continuation page gives most of its unit back once
 * answered (`refund`, `export-page-cost.ts`).
 */
export class RateBuckets implements FastifyRateLimitStore {
  /** Requests counted a window, in `PARTS` of one (an export continuation page costs less: `refund`). */
  private readonly buckets: FixedWindows;

  constructor(
    readonly max: number,
    readonly windowMs: number,
    cap = 10_000,
  ) {
    this.buckets = new FixedWindows(windowMs, cap);
  }

  /**
   * The plugin's call: one more request for `key`, whether or not it is over the limit. A fraction
   * left by refunds counts as a whole request, so the plugin sees (and its headers show) whole ones.
   */
  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
    const now = Date.now();
    const b = this.buckets.at(key, now);
    b.used += PARTS;
    callback(null, { current: Math.ceil(b.used / PARTS), ttl: b.start + this.windowMs - now });
  }

  /**
   * Gives `parts` of a request already counted back to the bucket `key` (`rateKey`), when it is
   * still counting this window; a bucket never goes below zero, so a window begun since gains nothing.
   */
  refund(key: string, parts: number, now = Date.now()): void {
    const b = this.buckets.running(key, now);
    if (parts <= 0 || b === undefined) return;
    b.used = Math.max(0, b.used - parts);
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
    const b = this.buckets.at(rateKey(req), now);
    if (b.used + n * PARTS <= this.max * PARTS) {
      b.used += n * PARTS;
      return null;
    }
    const retryAfter = this.buckets.secondsLeft(b, now);
    const left = Math.max(0, Math.floor((this.max * PARTS - b.used) / PARTS));
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

/** The names of the headers that state a limit, as @fastify/rate-limit sends them. */
const LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/**
 * Lowers the token's `x-ratelimit-remaining` the plugin set on `reply` by `charged` further
 * requests (the other messages of a batch, counted after the plugin's hook), so it says what is left.
 */
export function chargedHeaders(reply: FastifyReply, charged: number): void {
  const left = Number(reply.getHeader('x-ratelimit-remaining'));
  if (charged > 0 && Number.isFinite(left)) reply.header('x-ratelimit-remaining', Math.max(0, left - charged));
}

/**
 * The `x-ratelimit-*` headers fastify holds for `reply`, for an answer written around fastify:
 * `/v1/mcp` writes the transport's answer itself, which sent none (found by a review: an MCP client
 * could not see how close it was to a 429 that every HTTP reply warned of).
 */
export function heldRateHeaders(reply: FastifyReply): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of LIMIT_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) out[name] = String(value);
  }
  return out;
}
