import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';

import { Tokens } from '../auth/tokens.js';
import type { Store } from '../engine/store.js';
import { problemError } from '../protocol/body-problem.js';
import { ApiError } from '../protocol/errors.js';
import type { NodeInfo, Service } from '../service/context.js';
import { preauthorize, refuseRole } from '../service/identity.js';
import { AuthFailures } from './auth-failures.js';
import { registerDrain } from './drain.js';
import { clientErrorHandler, errorHandler, frameworkErrors, sendError } from './errors.js';
import { hostGuard } from './guard.js';
import { registerJsonBody } from './json-body.js';
import { registerMcp } from './mcp.js';
import { McpSessions, type SessionLimits } from './mcp-sessions.js';
import { parseQuery, refuseUndecodableQuery } from './query.js';
import { RateBuckets, rateKey } from './rate-limit.js';
import { routeMiss } from './route-miss.js';
import { registerRoutes } from './routes.js';
import { shareHeaders, UserShares } from './user-share.js';

/** How the HTTP app is set up; every field has a default fit for a personal node. */
export interface AppOptions {
  store: Store;
  node: NodeInfo;
  /** Whether the bind address is loopback (Host/Origin must then name this machine). */
  loopback: boolean;
  /** The bind address: accepted in `Host` (with the port) unless it is a wildcard. */
  bind?: string;
  /** Extra `host:port` values accepted in `Host`/`Origin`. */
  allowedHosts?: string[];
  /** The port actually listened on (known after listen). */
  port: () => number;
  /** Largest accepted body in bytes (default 8 MiB: a 5 MB document as base64 plus JSON). */
  bodyLimit?: number;
  /** Requests per minute per token (default 1200). */
  rateLimit?: number;
  /** Requests per minute one end user of a token that may act for several makes (default a quarter of `rateLimit`). */
  rateLimitPerUser?: number;
  sessions?: Partial<SessionLimits>;
  /** pino level (default `info`); `silent` in tests. */
  logLevel?: string;
  /** Where log lines go (default stdout); tests read them. */
  logStream?: { write(line: string): void };
}

/** A URL as logged: its path, and `?…` in place of a query string's names and values. */
export function logPath(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

/**
 * The fastify app: Host/Origin guard, per-token rate limit, JSON errors, the routes and MCP.
 * Logs carry request ids; tokens and memory contents are never logged at info level (the
 * Authorization header is redacted and bodies are not logged).
 */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    bodyLimit: opts.bodyLimit ?? 8 * 1024 * 1024,
    logger: {
      level: opts.logLevel ?? 'info',
      redact: ['req.headers.authorization', 'req.headers["x-cairn-user"]'],
      // fastify's request serializer, but the URL without its query string: `?user_id=…&scope=…`
      // carries the identity the redacted X-Cairn-User header would.
      serializers: {
        req: (req: FastifyRequest) => ({
          method: req.method,
          url: logPath(req.url),
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
      ...(opts.logStream === undefined ? {} : { stream: opts.logStream }),
    },
    forceCloseConnections: 'idle',
    // Requests that arrive while draining get our UNAVAILABLE body (`drain.ts`), not fastify's own.
    return503OnClosing: false,
    // Malformed requests (headers over 16 KiB, raw non-ASCII or bad escapes in the URL) answer in
    // DESIGN §3's shape too, and query values are decoded as UTF-8 only (`query.ts`).
    clientErrorHandler,
    frameworkErrors,
    routerOptions: { querystringParser: parseQuery },
  });
  // Shutdown: in-flight requests answered, every connection ended, new requests refused 503.
  registerDrain(app);
  app.decorateRequest('principal', null);
  // Bodies are JSON only; anything else is 415 rather than a string the schemas would misname.
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  // MCP answers a body's problem in JSON-RPC terms (`mcp.ts`); every other route refuses it here,
  // a memory verb after what its token alone decides (a user or scope it may not use is 403 first,
  // as the verb would judge it: the body as parsed still names them beside a refused part).
  app.addHook('preValidation', async (req) => {
    if (req.bodyProblem === null || req.routeOptions.url === '/v1/mcp') return;
    const url = req.routeOptions.url;
    if (req.principal !== null && url?.startsWith('/v1/memory/')) {
      refuseRole(req.principal, url.slice('/v1/memory/'.length));
      preauthorize(req.principal, req.body);
    }
    throw problemError(req.bodyProblem);
  });
  app.setErrorHandler(errorHandler);
  app.addHook('preValidation', refuseUndecodableQuery);
  app.setNotFoundHandler((req, reply) => sendError(reply, routeMiss(req.method, req.url)));
  app.addHook(
    'onRequest',
    hostGuard({
      loopback: opts.loopback,
      allowedHosts: opts.allowedHosts ?? [],
      port: opts.port,
      ...(opts.bind === undefined ? {} : { bind: opts.bind }),
    }),
  );
  // One count per token, shared with /v1/mcp, which charges each further message of a batch.
  const buckets = new RateBuckets(opts.rateLimit ?? 1200, 60_000);
  await app.register(rateLimit, {
    global: true,
    max: buckets.max,
    timeWindow: buckets.windowMs,
    store: buckets.asStore(),
    // Per token (by its header, never logged); requests without one share their address's bucket.
    keyGenerator: rateKey,
    errorResponseBuilder: (_req, ctx) => new ApiError('RATE_LIMITED', `too many requests; retry in ${ctx.after}`),
  });
  // Requests without a valid token: counted per address, apart from the tokens' counts.
  app.decorate('authFailures', new AuthFailures(buckets.max, buckets.windowMs));
  // An end user named by a call of a token that serves several gets a share of its minute.
  const perUser = opts.rateLimitPerUser ?? Math.max(1, Math.floor(buckets.max / 4));
  const share = perUser < buckets.max ? new UserShares(perUser, buckets.max, buckets.windowMs) : undefined;
  const svc: Service = { store: opts.store, node: opts.node, ...(share === undefined ? {} : { share }) };
  // The headers describe the limit the call was held to: the user's share when it has fewer left.
  if (share !== undefined) app.addHook('onSend', async (req, reply) => shareHeaders(share, req, reply));
  const tokens = new Tokens(opts.store);
  const maxPerToken = opts.sessions?.maxPerToken ?? 16;
  const sessions = new McpSessions(
    {
      maxSessions: opts.sessions?.maxSessions ?? 128,
      maxPerToken,
      maxPerUser: opts.sessions?.maxPerUser ?? 32,
      // One end user of a token serving several: a quarter of the token's, as their request share.
      maxPerEndUser: opts.sessions?.maxPerEndUser ?? Math.max(1, Math.floor(maxPerToken / 4)),
      idleMs: opts.sessions?.idleMs ?? 30 * 60_000,
    },
    tokens,
  );
  // The revoke route closes the revoked token's MCP sessions.
  registerRoutes(app, svc, tokens, sessions, buckets);
  registerMcp(app, svc, tokens, opts.node.version, sessions, buckets);
  return app;
}
