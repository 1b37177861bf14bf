import { randomUUID } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Tokens } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import type { Service } from '../service/context.js';
import type { Principal } from '../service/identity.js';
import { authHook, principalOf } from './auth.js';
import { sendError } from './errors.js';
import { DuplicateRequestId, JsonSession, SessionClosed } from './mcp-session.js';
import { toolServer } from './mcp-tools.js';

/** Bounds on MCP sessions: how many at once and how long one may sit idle. */
export interface SessionLimits {
  maxSessions: number;
  idleMs: number;
}

interface Session {
  transport: JsonSession;
  server: Server;
  /** The token that opened it: only that token may use it. */
  tokenId: string;
  lastSeen: number;
}

/** The most messages one POST may batch (the SDK transport's limit). */
const MAX_BATCH = 100;

/** A request the transport refuses before any message reaches the server. */
class Refused {
  constructor(
    readonly status: number,
    readonly code: number,
    readonly message: string,
  ) {}

  send(reply: FastifyReply) {
    const error = { code: this.code, message: this.message };
    return reply.code(this.status).type('application/json').send({ jsonrpc: '2.0', error, id: null });
  }
}

/** The messages of a POST body, one or a batch; null when any is not a JSON-RPC message. */
function messagesOf(body: unknown): JSONRPCMessage[] | null {
  const raw = Array.isArray(body) ? body : [body];
  const out: JSONRPCMessage[] = [];
  for (const m of raw) {
    const parsed = JSONRPCMessageSchema.safeParse(m);
    if (!parsed.success) return null;
    out.push(parsed.data);
  }
  return out;
}

/**
 * MCP over Streamable HTTP at `/v1/mcp`, answering each POST with JSON (no server push stream):
 * one tool server per session, bound to the token that opened it, evicted when idle or when the
 * cap is reached (least recently used). The HTTP rules are the transport specification's, as the
 * SDK's StreamableHTTPServerTransport applies them; `JsonSession` says why it is not used here.
 */
export function registerMcp(
  app: FastifyInstance,
  svc: Service,
  tokens: Tokens,
  version: string,
  limits: SessionLimits,
) {
  const sessions = new Map<string, Session>();

  const close = (id: string) => {
    const s = sessions.get(id);
    if (s === undefined) return;
    sessions.delete(id);
    void s.transport.close().catch(() => undefined);
    void s.server.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions) if (now - s.lastSeen > limits.idleMs) close(id);
    },
    Math.min(limits.idleMs, 60_000),
  );
  sweep.unref();
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    for (const id of [...sessions.keys()]) close(id);
  });

  const principalFromExtra = (extra: { authInfo?: { extra?: Record<string, unknown> } }): Principal => {
    const p = extra.authInfo?.extra?.principal as Principal | undefined;
    if (p === undefined) throw new ApiError('UNAUTHENTICATED', 'send a bearer token');
    return p;
  };

  const open = async (tokenId: string): Promise<Session> => {
    if (sessions.size >= limits.maxSessions) {
      const oldest = [...sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen)[0];
      if (oldest !== undefined) close(oldest[0]);
    }
    const server = toolServer(svc, version, principalFromExtra, (err) => app.log.error({ err }, 'tool failed'));
    const transport = new JsonSession(randomUUID());
    await server.connect(transport);
    const session = { transport, server, tokenId, lastSeen: Date.now() };
    sessions.set(transport.sessionId, session);
    return session;
  };

  /** The session a request names, or why it cannot be used. */
  const sessionOf = (req: FastifyRequest, p: Principal): Session | Refused => {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid !== 'string') {
      return new Refused(400, -32000, 'Bad Request: send an initialize request, or an Mcp-Session-Id header');
    }
    const s = sessions.get(sid);
    // Another token's session looks exactly like one that does not exist.
    if (s === undefined || s.tokenId !== p.token.id) return new Refused(404, -32001, 'Session not found');
    const version = req.headers['mcp-protocol-version'];
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(String(version))) {
      const supported = SUPPORTED_PROTOCOL_VERSIONS.join(', ');
      return new Refused(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${supported})`,
      );
    }
    s.lastSeen = Date.now();
    return s;
  };

  const post = async (req: FastifyRequest, reply: FastifyReply) => {
    const p = principalOf(req);
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return new Refused(
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      ).send(reply);
    }
    if (Array.isArray(req.body) && req.body.length > MAX_BATCH) {
      return new Refused(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`).send(reply);
    }
    const messages = messagesOf(req.body);
    if (messages === null) return new Refused(400, -32700, 'Parse error: Invalid JSON-RPC message').send(reply);
    let session: Session;
    if (messages.some(isInitializeRequest)) {
      if (req.headers['mcp-session-id'] !== undefined) {
        return new Refused(400, -32600, 'Invalid Request: Server already initialized').send(reply);
      }
      if (messages.length > 1) {
        return new Refused(400, -32600, 'Invalid Request: Only one initialization request is allowed').send(reply);
      }
      session = await open(p.token.id);
    } else {
      const s = sessionOf(req, p);
      if (s instanceof Refused) return s.send(reply);
      session = s;
    }
    const authInfo: AuthInfo = { token: '', clientId: p.token.id, scopes: [], extra: { principal: p } };
    let replies: JSONRPCMessage[];
    try {
      replies = await session.transport.exchange(messages, { authInfo });
    } catch (err) {
      if (err instanceof SessionClosed) return new Refused(404, -32001, err.message).send(reply);
      if (err instanceof DuplicateRequestId) return new Refused(400, -32600, err.message).send(reply);
      throw err;
    }
    if (replies.length === 0) return reply.code(202).send();
    return reply
      .code(200)
      .header('mcp-session-id', session.transport.sessionId)
      .type('application/json')
      .send(JSON.stringify(replies.length === 1 ? replies[0] : replies));
  };

  const remove = async (req: FastifyRequest, reply: FastifyReply) => {
    const s = sessionOf(req, principalOf(req));
    if (s instanceof Refused) return s.send(reply);
    close(s.transport.sessionId);
    return reply.code(200).send();
  };

  const onRequest = authHook(tokens);
  app.post('/v1/mcp', { onRequest }, post);
  app.delete('/v1/mcp', { onRequest }, remove);
  // No server-initiated push stream: say so before asking for a token, so clients fall back cleanly.
  app.get('/v1/mcp', (_req, reply) => {
    reply.header('Allow', 'POST, DELETE');
    return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', 'this node has no push stream; use POST'));
  });
  return { sessions };
}
