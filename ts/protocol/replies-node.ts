import { z } from 'zod';

import { ROLES } from './admin.js';
import { KindCounts, Time } from './reply-parts.js';

// The 200 replies of the node's own routes: health, whoami and the admin routes
// (`ts/server/routes.ts`, `ts/server/import-route.ts`). Registered in `ts/server/reply-schemas.ts`.

/** GET /health, 200: the node is up and its store takes writes. */
export const HealthReply = z.object({ status: z.literal('ok'), version: z.string(), profile: z.string() });

/**
 * GET /health, 503: the node answers, but its store is not whole: a write could not reach the disk
 * (full, or failing), so writes are stopped until the node has reopened the store (reads go on);
 * or a read met a page that fails its checksum, which stays so until the store is restored.
 */
export const HealthDegradedReply = z.object({
  status: z.literal('degraded'),
  version: z.string(),
  profile: z.string(),
  store: z.object({
    writes: z.enum(['ok', 'stopped']),
    reason: z
      .string()
      .optional()
      .describe('While stopped: the failed write, e.g. "growing the log: No space left on device (os error 28)"'),
    since: Time.optional().describe('While stopped: when the first write failed'),
    attempts: z
      .number()
      .int()
      .optional()
      .describe('While stopped: reopen attempts so far; each waits until the disk takes a probe file'),
    damaged: z
      .object({ reason: z.string(), since: Time })
      .optional()
      .describe('A page failed its checksum: the first one met, and when (run `cairn database check`)'),
  }),
});

/** GET /v1/whoami: the identity this token and these headers resolve to. */
export const WhoamiReply = z.object({
  tenant: z.string(),
  user: z.string(),
  scope: z.string(),
  agent: z.string(),
  role: z.enum(ROLES),
  token: z.object({ id: z.string() }),
  scopes: z.array(z.string()).nullable().describe('The scopes the token is limited to; null: any'),
});

/** A token as the admin routes show it: never the token itself, nor its hash. */
export const TokenInfo = z.object({
  id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  user: z.string().optional(),
  scopes: z.array(z.string()).optional(),
  role: z.enum(ROLES),
  createdAt: Time,
  expiresAt: Time.optional(),
  revokedAt: Time.optional(),
});

/** GET /v1/admin/tokens. */
export const TokenListReply = z.object({ tokens: z.array(TokenInfo) });

/** POST /v1/admin/tokens: the token is in this reply only. */
export const TokenCreateReply = z.object({
  token: z.string(),
  id: z.string(),
  agent: z.string(),
  user: z.string().nullable(),
  scopes: z.array(z.string()).nullable(),
  role: z.enum(ROLES),
  expiresAt: Time.nullable().describe('When the token stops working; null: never'),
});

/** DELETE /v1/admin/tokens/{id}. */
export const TokenRevokeReply = z.object({ revoked: TokenInfo });

/** GET /v1/admin/check: the store's integrity report (`cairn check`). */
export const CheckReply = z.object({
  ok: z.boolean(),
  txn: z.string().describe('The transaction checked (decimal string)'),
  pagesTotal: z.int(),
  pagesReachable: z.int(),
  pagesFree: z.int(),
  trees: z.array(z.object({ name: z.string(), entries: z.int() })),
  problems: z.array(z.object({ page: z.int().optional(), tree: z.string().optional(), what: z.string() })),
});

/** POST /v1/admin/import: `import`'s reply and which path took the file. */
export const AdminImportReply = z.object({
  mode: z.enum(['load', 'load_then_import', 'import']),
  imported: KindCounts,
  unchanged: KindCounts,
  skipped: z.array(z.object({ index: z.int().min(0), reason: z.string() })),
  not_reproduced: z.array(z.record(z.string(), z.unknown())),
});

/** POST /v1/admin/database/backup: what the online backup copied. */
export const BackupReply = z.object({
  dest: z.string(),
  txn: z.string().describe('The transaction the copy is consistent at (decimal string)'),
  pages: z.int(),
  bytes: z.int(),
});

/** POST /v1/admin/database/compact: what the compaction changed. */
export const CompactReply = z.object({
  purge: z.boolean(),
  pagesBefore: z.int(),
  pagesAfter: z.int(),
  bytesZeroed: z.int().describe('Bytes of freed space and log zeroed (0 without purge)'),
});

/** A JSON-RPC 2.0 message of MCP (`POST /v1/mcp`): a result or an error for a request `id`. */
export const JsonRpcMessage = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.int(), z.null()]).optional(),
  result: z.unknown().optional(),
  error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

/** A JSON-RPC 2.0 request or notification (no `id`) of MCP, e.g. `initialize`, `tools/call`. */
export const JsonRpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.int()]).optional(),
  method: z.string(),
  params: z.unknown().optional(),
});

/** What `POST /v1/mcp` reads: a JSON-RPC message (request, notification or reply) or a batch. */
export const McpRequest = z.union([JsonRpcRequest, JsonRpcMessage, z.array(z.union([JsonRpcRequest, JsonRpcMessage]))]);

/** What `POST /v1/mcp` answers a request (or a batch of them) with. */
export const McpReply = z.union([JsonRpcMessage, z.array(JsonRpcMessage)]);
