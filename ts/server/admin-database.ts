import type { FastifyInstance } from 'fastify';
import type { Tokens } from '../auth/tokens.js';
import { StoreError } from '../engine/errors.js';
import { BackupInput, CompactInput } from '../protocol/admin.js';
import { ApiError } from '../protocol/errors.js';
import { parseInput, type Service } from '../service/context.js';
import { storeAdminHook } from './auth.js';

/**
 * The store maintenance `cairn database backup|compact` runs through while a node holds the
 * store (DESIGN.md §4: the CLI never opens a store a node holds): an online backup into a
 * directory on the node's machine, and a compaction that, with `purge`, also zeroes what
 * forgotten data left in freed pages and the log. Both act on every user's data: an admin token
 * with no user or scope limit only.
 */
export function registerDatabaseRoutes(app: FastifyInstance, tokens: Tokens, svc: Service) {
  const admin = { onRequest: storeAdminHook(tokens) };
  app.post('/v1/admin/database/backup', admin, async (req) => {
    const { dest } = parseInput(BackupInput, req.body ?? {});
    try {
      return { dest, ...(await svc.store.backup(dest)) };
    } catch (err) {
      // The destination is the caller's choice: one that holds a store or cannot be written says so.
      if (err instanceof StoreError && (err.code === 'INVALID_ARGUMENT' || err.code === 'STORE_IO')) {
        throw new ApiError('VALIDATION_ERROR', `dest: ${err.message}`, [{ field: 'dest', message: err.message }]);
      }
      throw err;
    }
  });
  app.post('/v1/admin/database/compact', admin, async (req) => {
    const { purge = false } = parseInput(CompactInput, req.body ?? {});
    return { purge, ...(await svc.store.compact({ purge })) };
  });
}
