import { createReadStream } from 'node:fs';

import type { FastifyInstance } from 'fastify';
import type { Tokens } from '../auth/tokens.js';
import { StoreError } from '../engine/errors.js';
import { BackupInput, CompactInput } from '../protocol/admin.js';
import { ApiError } from '../protocol/errors.js';
import { parseInput, type Service } from '../service/context.js';
import { storeAdminHook } from './auth.js';
import { isInside, stagedBackup } from './backup-file.js';

/**
 * The store maintenance `cairn database backup|compact` runs through while a node holds the
 * store (DESIGN.md §4: the CLI never opens a store a node holds): an online backup, answered as
 * the body (what the CLI writes to DEST itself, so a node in a sandbox, whose /tmp and file system
 * are not the operator's, still gives a backup the operator can see) or written into a directory
 * on the node's machine; and a compaction that, with `purge`, also zeroes what forgotten data
 * left in freed pages and the log. Both act on every user's data: an admin token with no user or
 * scope limit only.
 */
export function registerDatabaseRoutes(app: FastifyInstance, tokens: Tokens, svc: Service) {
  const admin = { onRequest: storeAdminHook(tokens) };
  app.post('/v1/admin/database/backup', admin, async (req) => {
    const { dest } = parseInput(BackupInput, req.body ?? {});
    if (isInside(dest, svc.store.dir)) throw insideDataDir(dest);
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
  app.post('/v1/admin/database/backup/file', admin, async (_req, reply) => {
    const staged = await stagedBackup(svc.store);
    const { txn, pages } = staged.report;
    void reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', staged.bytes)
      .header('x-cairn-backup', JSON.stringify({ txn, pages, bytes: staged.bytes, sha256: staged.sha256 }));
    // The stream closes the descriptor however the response ends (sent, or the caller gone),
    // and the copy, whose name is already gone, goes with it.
    return reply.send(createReadStream('', { fd: staged.fd, start: 0 }));
  });
  app.post('/v1/admin/database/compact', admin, async (req) => {
    const { purge = false } = parseInput(CompactInput, req.body ?? {});
    return { purge, ...(await svc.store.compact({ purge })) };
  });
}

/** A backup asked for inside the data dir: `compact --purge` would leave forgotten data in it. */
function insideDataDir(dest: string): ApiError {
  const message = `${dest} is inside the node's data dir: a backup there keeps what \`compact --purge\` removes; choose a directory outside it`;
  return new ApiError('VALIDATION_ERROR', `dest: ${message}`, [{ field: 'dest', message }]);
}
