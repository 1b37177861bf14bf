import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';

import type { Tokens } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import { Name256 } from '../protocol/fields.js';
import { parseInput, type Service } from '../service/context.js';
import { resolveIdentity } from '../service/identity.js';
import { importLines } from '../service/import-file.js';
import { adminHook, principalOf } from './auth.js';

/** The largest export file the node takes in one request. */
export const IMPORT_BODY_LIMIT = 1024 * 1024 * 1024;

const ImportQuery = z
  .object({ user: Name256.optional(), scope: Name256.optional(), empty: z.enum(['true', 'false']).optional() })
  .strict();

/**
 * `POST /v1/admin/import?user=U&scope=S[&empty=true]` (admin token): the body is an export file, JSON lines
 * (`application/x-ndjson`), imported into that user's scope (`importLines`: a bulk load when the
 * scope is empty, else `import` page by page; with `empty=true`, only into an empty scope). What
 * `cairn import` calls while a node runs.
 */
export function registerImportRoute(app: FastifyInstance, tokens: Tokens, svc: Service) {
  void app.register(async (scoped) => {
    // Only this route reads a body as raw lines; everywhere else bodies stay JSON.
    scoped.addContentTypeParser(
      'application/x-ndjson',
      { parseAs: 'buffer', bodyLimit: IMPORT_BODY_LIMIT },
      (_req, body, done) => done(null, body),
    );
    // Checked before any body parser runs, so a JSON body is refused as the wrong type, not as bad JSON.
    const ndjsonOnly = async (req: FastifyRequest) => {
      if (!/^application\/x-ndjson\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'the body is an export file: send it as application/x-ndjson');
      }
    };
    const onRequest = [adminHook(tokens), ndjsonOnly];
    scoped.post('/v1/admin/import', { onRequest, bodyLimit: IMPORT_BODY_LIMIT }, async (req) => {
      const q = parseInput(ImportQuery, req.query);
      const id = resolveIdentity(principalOf(req), { user_id: q.user, scope: q.scope });
      const lines = req.body as Buffer;
      const caller = { tenant: id.tenant, user: id.user, scope: id.scope, agent: id.agent };
      return importLines(svc.store, caller, lines, { emptyOnly: q.empty === 'true' });
    });
  });
}
