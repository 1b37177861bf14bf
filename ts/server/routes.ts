import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import type { z } from 'zod';

import type { Tokens } from '../auth/tokens.js';
import { TokenCreateInput } from '../protocol/admin.js';
import { ApiError } from '../protocol/errors.js';
import type { HealthDegradedReply, HealthReply, TokenCreateReply, WhoamiReply } from '../protocol/replies-node.js';
import { VERBS } from '../protocol/verbs.js';
import { parseInput, type Service } from '../service/context.js';
import { resolveIdentity } from '../service/identity.js';
import { SERVICES } from '../service/memory.js';
import { registerDatabaseRoutes } from './admin-database.js';
import { registerAdminNoteRoutes } from './admin-notes.js';
import { authHook, principalOf, storeAdminHook } from './auth.js';
import { DOCS_HTML } from './docs-page.js';
import { sendError } from './errors.js';
import { exportPageRefund } from './export-page-cost.js';
import { registerImportRoute } from './import-route.js';
import type { McpSessions } from './mcp-sessions.js';
import { openApiDocument } from './openapi.js';
import { type RateBuckets, rateKey } from './rate-limit.js';

/** Paths OAuth clients probe; Cairn uses bearer tokens, so they are plain JSON 404s, before auth. */
const OAUTH_PATHS = [
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-authorization-server/*',
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/*',
  '/.well-known/openid-configuration',
  '/.well-known/openid-configuration/*',
  '/register',
];

/** Methods no memory verb route takes (GET and HEAD are status's). */
const OTHER_METHODS: HTTPMethods[] = ['PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The memory verbs, health, whoami, the API description, and the admin token routes (a revoke
 * closes the token's MCP sessions in `sessions`). An export continuation page answered gives part
 * of its request back to the token's count in `buckets` (`export-page-cost.ts`).
 */
export function registerRoutes(
  app: FastifyInstance,
  svc: Service,
  tokens: Tokens,
  sessions: McpSessions,
  buckets: RateBuckets,
) {
  const onRequest = authHook(tokens);
  const open = { config: { rateLimit: false } };

  app.get('/health', open, (_req, res) => {
    const store = svc.store.health();
    const { version, profile } = svc.node;
    if (store.writes === 'stopped' || store.damaged !== undefined) {
      const degraded: z.infer<typeof HealthDegradedReply> = { status: 'degraded', version, profile, store };
      return res.code(503).send(degraded);
    }
    const reply: z.infer<typeof HealthReply> = { status: 'ok', version, profile };
    return reply;
  });
  const doc = openApiDocument(svc.node.version);
  app.get('/v1/openapi.json', open, () => doc);
  app.get('/docs', open, (_req, reply) => reply.type('text/html; charset=utf-8').send(DOCS_HTML));
  for (const path of OAUTH_PATHS) {
    app.all(path, open, (_req, reply) =>
      reply.code(404).send(new ApiError('NOT_FOUND', 'this node uses bearer tokens, not OAuth').body()),
    );
  }

  app.get('/v1/whoami', { onRequest }, (req) => {
    const p = principalOf(req);
    const id = resolveIdentity(p, {});
    const reply: z.infer<typeof WhoamiReply> = {
      ...id,
      role: p.token.role,
      token: { id: p.token.id },
      scopes: p.token.scopes ?? null,
    };
    return reply;
  });

  for (const spec of VERBS) {
    const run = SERVICES[spec.verb];
    if (run === undefined) continue;
    // A GET (status) takes its fields from the query string: `?scope=S` asks for that scope's ontology.
    const handler = async (req: FastifyRequest) => {
      const input = req.method === 'GET' ? req.query : req.body;
      const reply = await run(svc, principalOf(req), input);
      buckets.refund(rateKey(req), exportPageRefund(spec.verb, input));
      return reply;
    };
    const url = `/v1/memory/${spec.verb}`;
    app.post(url, { onRequest }, handler);
    const readable = spec.verb === 'status';
    if (readable) app.get(url, { onRequest }, handler);
    // Any other method is 405 naming the ones that work, before auth, as on /v1/mcp.
    const allow = readable ? 'GET, POST' : 'POST';
    app.route({
      method: readable ? OTHER_METHODS : ['GET', 'HEAD', ...OTHER_METHODS],
      url,
      ...open,
      handler: (req, reply) => {
        reply.header('Allow', allow);
        return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allow}`));
      },
    });
  }

  // Store-wide: an unlimited admin token only (a limited one could mint an unlimited one).
  const admin = { onRequest: storeAdminHook(tokens) };
  app.get('/v1/admin/tokens', admin, async () => ({ tokens: await tokens.list() }));
  app.post('/v1/admin/tokens', admin, async (req) => {
    const input = parseInput(TokenCreateInput, req.body);
    const { token, record } = await tokens.create({ ...input, tenant: principalOf(req).token.tenant });
    const reply: z.infer<typeof TokenCreateReply> = {
      token,
      id: record.id,
      agent: record.agent,
      user: record.user ?? null,
      scopes: record.scopes ?? null,
      role: record.role,
      expiresAt: record.expiresAt ?? null,
    };
    return reply;
  });
  app.delete<{ Params: { id: string } }>('/v1/admin/tokens/:id', admin, async (req) => {
    const revoked = await tokens.revoke(req.params.id);
    if (revoked === null) throw new ApiError('NOT_FOUND', `no token has id ${req.params.id}`);
    // Its sessions stop at once and free their places under the node's session cap.
    sessions.closeToken(revoked.id);
    return { revoked };
  });
  // The integrity report of the store this node holds (`cairn check` while a node runs).
  app.get('/v1/admin/check', admin, async () => svc.store.check());
  registerImportRoute(app, tokens, svc);
  registerDatabaseRoutes(app, tokens, svc);
  registerAdminNoteRoutes(app, tokens, svc);
}
