import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';

import type { Tokens } from '../auth/tokens.js';
import { ApiError } from '../protocol/errors.js';
import { Name256 } from '../protocol/fields.js';
import { parseInput, type Service } from '../service/context.js';
import { resolveIdentity } from '../service/identity.js';
import { importLines } from '../service/import-file.js';
import { adminHook, principalOf } from './auth.js';

/**
 * The largest export file the node takes in one request. The body is read a piece at a time
 * (`importLines`), so the node's memory does not grow with it; the limit only bounds one request.
 */
export const IMPORT_BODY_LIMIT = 64 * 1024 * 1024 * 1024;

const ImportQuery = z
  .object({
    user: Name256.optional(),
    scope: Name256.optional(),
    empty: z.enum(['true', 'false', 'pieces']).optional(),
  })
  .strict();

/**
 * `POST /v1/admin/import?user=U&scope=S[&empty=true|pieces]` (admin token): the body is an export file, JSON lines
 * (`application/x-ndjson`), imported into that user's scope (`importLines`: a bulk load when the
 * scope is empty, else `import` page by page; with `empty=true`, a Memory Package: only into an
 * empty scope, in one transaction, and refused whole when any record fails its checks; with
 * `empty=pieces`, only into an empty scope, then as a file goes, each piece committed alone). What
 * `cairn import` calls while a node runs.
 */
export function registerImportRoute(app: FastifyInstance, tokens: Tokens, svc: Service) {
  void app.register(async (scoped) => {
    // Only this route reads a body as raw lines, and as a stream: `importLines` takes it a piece
    // at a time as it arrives. Everywhere else bodies stay JSON.
    scoped.addContentTypeParser('application/x-ndjson', (_req, payload, done) => done(null, payload));
    // Checked before any body parser runs, so a JSON body is refused as the wrong type, not as bad JSON.
    const ndjsonOnly = async (req: FastifyRequest) => {
      if (!/^application\/x-ndjson\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'the body is an export file: send it as application/x-ndjson');
      }
    };
    // The length first (the body is not buffered, so fastify's own limit does not apply): a body
    // over the limit must be refused before its first piece is stored.
    const lengthFirst = async (req: FastifyRequest) => {
      const length = Number(req.headers['content-length']);
      if (req.headers['content-length'] === undefined || !Number.isSafeInteger(length)) {
        throw new ApiError('VALIDATION_ERROR', 'send the export file with a Content-Length header', [
          { field: 'content-length', message: 'required' },
        ]);
      }
      if (length > IMPORT_BODY_LIMIT) {
        throw new ApiError('PAYLOAD_TOO_LARGE', `the body is ${length} bytes; the limit is ${IMPORT_BODY_LIMIT}`);
      }
    };
    const onRequest = [adminHook(tokens), ndjsonOnly, lengthFirst];
    scoped.post('/v1/admin/import', { onRequest, bodyLimit: IMPORT_BODY_LIMIT }, async (req) => {
      const q = parseInput(ImportQuery, req.query);
      const id = resolveIdentity(principalOf(req), { user_id: q.user, scope: q.scope }, 'user');
      const lines = req.body as AsyncIterable<Uint8Array>;
      const caller = { tenant: id.tenant, user: id.user, scope: id.scope, agent: id.agent };
      // `lengthFirst` has checked the length: a package goes in whole, so it is the package's size.
      const whole = q.empty === 'true' ? { bytes: Number(req.headers['content-length']) } : undefined;
      return importLines(svc.store, caller, lines, { whole, empty: q.empty === 'pieces' });
    });
  });
}
