import { randomUUID } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { TokenRecord, Tokens } from '../auth/tokens.js';
import { type BodyProblem, problemError } from '../protocol/body-problem.js';
import { ApiError } from '../protocol/errors.js';
import type { Service } from '../service/context.js';
import type { Principal } from '../service/identity.js';
import { authHook, principalOf } from './auth.js';
import { errorHandler as appErrorHandler, sendError } from './errors.js';
import { exportPageRefund } from './export-page-cost.js';
import { releaseAnswered } from './mcp-answered.js';
import { endUserOf, type McpSessions, ownerOf } from './mcp-sessions.js';
import { toolServer } from './mcp-tools.js';
import { sendWebResponse, webRequest } from './mcp-web.js';
import { chargedHeaders, heldRateHeaders, type RateBuckets, rateKey } from './rate-limit.js';
import { shareHeaders, UserShares } from './user-share.js';

/** Seconds a client refused for a full node is told to wait (idle sessions are swept each minute). */
const FULL_RETRY_AFTER_S = 60;

function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * A body whose JSON cannot be kept as sent (`json-body.ts`): inside one `tools/call`'s arguments,
 * the tool error a refused call gets (DESIGN §3's body, the field named from the arguments);
 * anywhere else, a JSON-RPC invalid-params error naming it. Nothing of the body runs.
 */
function answerProblem(reply: FastifyReply, body: unknown, problem: BodyProblem) {
  const [first, second, ...rest] = problem.path;
  const message = body as { id?: unknown; method?: unknown } | null;
  const id = typeof message?.id === 'string' || typeof message?.id === 'number' ? message.id : null;
  if (!Array.isArray(body) && message?.method === 'tools/call' && first === 'params' && second === 'arguments') {
    const refusal = problemError({ path: rest, message: problem.message }).body();
    const result = {
      content: [{ type: 'text', text: JSON.stringify(refusal) }],
      structuredContent: refusal,
      isError: true,
    };
    return reply.code(200).type('application/json').send({ jsonrpc: '2.0', id, result });
  }
  const error = { code: -32602, message: `Invalid params: ${problemError(problem).message}` };
  return reply
    .code(400)
    .type('application/json')
    .send({ jsonrpc: '2.0', error, id: Array.isArray(body) ? null : id });
}

/** The ids of the requests (not notifications or replies) in a POST body, one message or a batch. */
function requestIds(body: unknown): RequestId[] {
  const ids: RequestId[] = [];
  for (const m of Array.isArray(body) ? body : [body]) {
    if (typeof m !== 'object' || m === null || !('method' in m) || !('id' in m)) continue;
    const id = (m as { id: unknown }).id;
    if (typeof id === 'string' || typeof id === 'number') ids.push(id);
  }
  return ids;
}

/**
 * MCP over Streamable HTTP at `/v1/mcp`: the SDK's web-standard transport (fed by `mcp-web.ts`,
 * cheaper per call than the SDK's node wrapper around it) in its JSON-response form and a tool
 * server per session, bound to the token that opened it, evicted when idle, when its token or
 * user opens one past their share (their least recently used), or once its token is revoked or
 * expired (`mcp-sessions.ts`); a node at its cap refuses new sessions (503, Retry-After) rather
 * than close another live token's. The transport applies the protocol's HTTP rules; this adds the
 * token binding, the bounds, and a refusal of a request id already waiting for its reply in the
 * session (the transport would route both replies to the later request and leave the first open).
 */
export function registerMcp(
  app: FastifyInstance,
  svc: Service,
  tokens: Tokens,
  version: string,
  sessions: McpSessions,
  buckets?: RateBuckets,
) {
  const { limits } = sessions;
  const sweep = setInterval(() => sessions.sweep(), Math.min(limits.idleMs, 60_000));
  sweep.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    sessions.closeAll();
  });

  const principalFromExtra = (extra: { authInfo?: { extra?: Record<string, unknown> } }): Principal => {
    const p = extra.authInfo?.extra?.principal as Principal | undefined;
    if (p === undefined) throw new ApiError('UNAUTHENTICATED', 'send a bearer token');
    return p;
  };

  // An export continuation page gives part of its request back to the bucket the call was counted in.
  const answered = (verb: string, args: unknown, extra: { authInfo?: { extra?: Record<string, unknown> } }) => {
    const key = extra.authInfo?.extra?.rateKey;
    if (buckets !== undefined && typeof key === 'string') buckets.refund(key, exportPageRefund(verb, args));
  };

  /**
   * A transport for a request that names no session: it becomes a session only if the transport
   * accepts the request as an initialize (the cap is applied then, so refused requests evict
   * nobody); otherwise it answers the refusal and is dropped.
   */
  const open = async (
    token: TokenRecord,
    endUser: string | undefined,
    admitted: () => void,
  ): Promise<WebStandardStreamableHTTPServerTransport> => {
    const server = toolServer(
      svc,
      version,
      token.role,
      principalFromExtra,
      (err) => app.log.error({ err }, 'tool failed'),
      answered,
    );
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        admitted();
        const bound = { id: token.id, hash: token.hash };
        const owner = ownerOf(token);
        sessions.add(id, {
          transport,
          server,
          token: bound,
          owner,
          endUser,
          lastSeen: Date.now(),
          inFlight: new Set(),
        });
      },
      onsessionclosed: (id) => sessions.close(id),
    });
    await server.connect(transport);
    return transport;
  };

  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const p = principalOf(req);
    // Each message of a batch is a request for the rate limit: the plugin counted this one, the
    // rest are charged here, all or none, before any of them runs.
    const charged = buckets !== undefined && Array.isArray(req.body) ? Math.max(0, req.body.length - 1) : 0;
    if (buckets !== undefined && charged > 0) {
      const over = buckets.charge(req, charged);
      if (over !== null) {
        reply.header('Retry-After', String(over.retryAfter));
        return sendError(reply, over.error);
      }
    }
    const sid = req.headers['mcp-session-id'];
    let transport: WebStandardStreamableHTTPServerTransport;
    if (typeof sid === 'string') {
      const s = sessions.get(sid);
      // Another token's session looks exactly like one that does not exist.
      if (s === undefined || s.token.id !== p.token.id) return rpcError(reply, 404, -32001, 'Session not found');
      s.lastSeen = Date.now();
      const ids = requestIds(req.body);
      const taken = ids.find((id, i) => s.inFlight.has(id) || ids.indexOf(id) !== i);
      if (taken !== undefined) {
        const what = `request id ${JSON.stringify(taken)} is already in flight in this session`;
        return rpcError(reply, 400, -32600, `Invalid Request: ${what}`);
      }
      for (const id of ids) s.inFlight.add(id);
      reply.raw.once('close', () => {
        for (const id of ids) s.inFlight.delete(id);
      });
      transport = s.transport;
    } else if (req.method === 'POST') {
      const initializing = (Array.isArray(req.body) ? req.body : [req.body]).some((m) => isInitializeRequest(m));
      const endUser = endUserOf(p.token, p.headerUser);
      if (initializing && !sessions.fits(p.token, endUser)) {
        reply.header('Retry-After', String(FULL_RETRY_AFTER_S));
        const full = `the node holds its maximum of ${limits.maxSessions} MCP sessions; retry later`;
        return rpcError(reply, 503, -32000, `Server busy: ${full}`);
      }
      // Reserve a place until the transport makes the session (or refuses the request).
      const admitted = initializing ? sessions.reserve() : () => undefined;
      reply.raw.once('close', admitted);
      transport = await open(p.token, endUser, admitted);
    } else {
      return rpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    }
    if (req.bodyProblem !== null) return answerProblem(reply, req.body, req.bodyProblem);
    const authInfo: AuthInfo = {
      token: '',
      clientId: p.token.id,
      scopes: [],
      extra: { principal: p, rateKey: rateKey(req) },
    };
    reply.hijack();
    try {
      const answer = await transport.handleRequest(webRequest(req.raw), { parsedBody: req.body, authInfo });
      releaseAnswered(transport);
      // The headers say the limit the calls were held to: their user's share when it has fewer left.
      chargedHeaders(reply, charged);
      if (svc.share instanceof UserShares) shareHeaders(svc.share, req, reply);
      await sendWebResponse(reply.raw, answer, heldRateHeaders(reply));
    } catch (err) {
      // Hijacked: fastify's error handler no longer answers, so the failure is answered here.
      app.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
        reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(body);
      }
    }
    return reply;
  };

  const onRequest = authHook(tokens);
  // A body that is not JSON is a JSON-RPC parse error here (as the SDK transport answers it), not
  // the §3 422 of the other routes; every other refusal (401, 413, 415, 429) keeps the §3 body.
  const errorHandler = (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const code = (err as { code?: unknown } | null)?.code;
    if (
      code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      err instanceof SyntaxError
    ) {
      const what = code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'the body is empty' : 'the body is not valid JSON';
      return rpcError(reply, 400, -32700, `Parse error: ${what}`);
    }
    return appErrorHandler(err, req, reply);
  };
  app.post('/v1/mcp', { onRequest, errorHandler }, handle);
  app.delete('/v1/mcp', { onRequest, errorHandler }, handle);
  // No server-initiated push stream: say so before asking for a token, so clients fall back cleanly.
  // Not counted by the rate limit, as the other 405s here: the official SDK client probes it after
  // every initialize (found by a review: each session cost the token a request it never made), and
  // the 429 a flood of them would get costs the node what this constant answer does.
  app.get('/v1/mcp', { config: { rateLimit: false } }, (_req, reply) => {
    reply.header('Allow', 'POST, DELETE');
    return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', 'this node has no push stream; use POST'));
  });
  // Any other method: 405 naming the two that work, before auth, as on the memory verb routes.
  app.route({
    method: ['PUT', 'PATCH', 'OPTIONS'],
    url: '/v1/mcp',
    config: { rateLimit: false },
    handler: (req, reply) => {
      reply.header('Allow', 'POST, DELETE');
      return sendError(
        reply,
        new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use POST, DELETE`),
      );
    },
  });
}
