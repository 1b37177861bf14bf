import type { z } from 'zod';

import { AS_AGENT_VERBS, BackupInput, CompactInput, TokenCreateInput } from '../protocol/admin.js';
import { jsonSchemaOf } from '../protocol/json-schema.js';
import {
  AdminImportReply,
  BackupReply,
  CheckReply,
  CompactReply,
  HealthDegradedReply,
  HealthReply,
  JsonRpcMessage,
  McpReply,
  McpRequest,
  TokenCreateReply,
  TokenListReply,
  TokenRevokeReply,
  WhoamiReply,
} from '../protocol/replies-node.js';
import { VERBS } from '../protocol/verbs.js';
import { errorResponses, ROUTE_ERRORS, VERB_ERRORS } from './openapi-errors.js';
import { replyComponents, replyRef } from './reply-schemas.js';

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: { type: 'string', description: 'A code of DESIGN.md §3, e.g. VALIDATION_ERROR' },
        message: { type: 'string' },
        details: { type: 'array', items: {} },
      },
    },
  },
};

const json = (schema: object) => ({ content: { 'application/json': { schema } } });

/** A 200 reply of the shape `schema` (a component of `reply-schemas.ts`). */
const ok = (description: string, schema: z.ZodType) => ({ '200': { description, ...json(replyRef(schema)) } });

/** How an identity header carries a name (docs/api.md, "Identity"). */
const HEADER_ENCODING =
  "The name's UTF-8 bytes, or UTF-8'' and its percent-encoded UTF-8 (RFC 8187, e.g. UTF-8''caf%C3%A9); " +
  'bytes that are not UTF-8 are 422 naming the header.';

const IDENTITY_HEADERS = [
  {
    name: 'X-Cairn-User',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: `User; wins. ${HEADER_ENCODING}`,
  },
  {
    name: 'X-Cairn-Scope',
    in: 'header',
    required: false,
    schema: { type: 'string' },
    description: `Default scope. ${HEADER_ENCODING}`,
  },
];

/** `GET /v1/memory/status` reads its fields from the query string. */
const STATUS_QUERY = [
  { name: 'scope', in: 'query', required: false, schema: { type: 'string' }, description: 'Also return its ontology' },
  { name: 'user_id', in: 'query', required: false, schema: { type: 'string' } },
];

/** The memory verbs: `POST /v1/memory/<verb>` (and `GET` for status). */
function verbPaths(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const spec of VERBS) {
    const reply = ok('The verb’s reply (DESIGN.md §2 “Reply shapes”)', spec.reply);
    const responses = { ...reply, ...errorResponses([...ROUTE_ERRORS.body, ...(VERB_ERRORS[spec.verb] ?? [])]) };
    const post = {
      operationId: spec.tool ?? spec.verb,
      summary: spec.title,
      description: spec.description,
      parameters: IDENTITY_HEADERS,
      requestBody: { required: true, ...json(jsonSchemaOf(spec.input)) },
      responses,
    };
    paths[`/v1/memory/${spec.verb}`] = { post };
    if (spec.verb === 'status') {
      const get = {
        operationId: `${post.operationId}_get`,
        summary: post.summary,
        description: `${post.description} The fields come from the query string.`,
        parameters: [...IDENTITY_HEADERS, ...STATUS_QUERY],
        responses: { ...reply, ...errorResponses(ROUTE_ERRORS.tokenGet) },
      };
      paths['/v1/memory/status'] = { get, post };
    }
  }
  return paths;
}

/** `POST /v1/admin/agents/{agent}/memory/<verb>`: a note operation or the audit run as another agent (admin). */
function asAgentPaths(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const agent = { name: 'agent', in: 'path', required: true, schema: { type: 'string' }, description: 'Act as' };
  for (const { verb, needs } of AS_AGENT_VERBS) {
    const spec = VERBS.find((v) => v.verb === verb);
    if (spec === undefined) throw new Error(`${verb} is not a verb`);
    const only = needs === null ? '' : ` (the \`${needs}\` form only)`;
    paths[`/v1/admin/agents/{agent}/memory/${verb}`] = {
      post: {
        summary: `${spec.title} as another agent${only} (admin): ${verb === 'audit' ? 'what that agent wrote' : "reaches that agent's agent-visibility notes"}`,
        parameters: [agent, ...IDENTITY_HEADERS],
        requestBody: { required: true, ...json(jsonSchemaOf(spec.input)) },
        responses: {
          ...ok('The verb’s reply', spec.reply),
          ...errorResponses([...ROUTE_ERRORS.body, ...(VERB_ERRORS[verb] ?? [])]),
        },
      },
    };
  }
  return paths;
}

/** The node's own routes: health, the API description, whoami, MCP and the admin routes. */
function nodePaths(): Record<string, unknown> {
  const admin = (summary: string, rest: Record<string, unknown>) => ({ summary, ...rest });
  return {
    '/health': {
      get: {
        summary: 'Liveness (no token)',
        security: [],
        responses: {
          ...ok('The node is up', HealthReply),
          ...errorResponses(ROUTE_ERRORS.open),
          '503': {
            description:
              'UNAVAILABLE: the node is shutting down (an Error body); or `degraded`: the node is up, but its store takes no writes until the node has reopened it (a full or failing disk)',
            ...json({ oneOf: [{ $ref: '#/components/schemas/Error' }, replyRef(HealthDegradedReply)] }),
          },
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        summary: 'This document (no token)',
        security: [],
        responses: {
          '200': { description: 'The OpenAPI 3.1 document of this node', ...json({ type: 'object' }) },
          ...errorResponses(ROUTE_ERRORS.open),
        },
      },
    },
    '/docs': {
      get: {
        summary: 'A readable rendering of this document (no token; static HTML, no CDN)',
        security: [],
        responses: {
          '200': { description: 'The docs page', content: { 'text/html': { schema: { type: 'string' } } } },
          ...errorResponses(ROUTE_ERRORS.open),
        },
      },
    },
    '/v1/whoami': {
      get: {
        summary: 'The identity this token and these headers resolve to',
        parameters: IDENTITY_HEADERS,
        responses: { ...ok('The resolved identity', WhoamiReply), ...errorResponses(ROUTE_ERRORS.tokenGet) },
      },
    },
    '/v1/mcp': mcpPath(),
    '/v1/admin/tokens': {
      get: admin('List tokens (admin)', {
        responses: { ...ok('Every token, oldest first', TokenListReply), ...errorResponses(ROUTE_ERRORS.token) },
      }),
      post: admin('Create a token (admin); the token is shown once', {
        requestBody: { required: true, ...json(jsonSchemaOf(TokenCreateInput)) },
        responses: { ...ok('The new token', TokenCreateReply), ...errorResponses(ROUTE_ERRORS.body) },
      }),
    },
    '/v1/admin/tokens/{id}': {
      delete: admin('Revoke a token (admin)', {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { ...ok('The revoked token', TokenRevokeReply), ...errorResponses(ROUTE_ERRORS.revoke) },
      }),
    },
    '/v1/admin/check': {
      get: admin("The integrity report of the node's store (admin): what `cairn check` prints", {
        responses: { ...ok('The report', CheckReply), ...errorResponses(ROUTE_ERRORS.token) },
      }),
    },
    '/v1/admin/database/backup': {
      post: admin('An online, consistent backup of the store into a directory on the node’s machine (admin)', {
        requestBody: { required: true, ...json(jsonSchemaOf(BackupInput)) },
        responses: { ...ok('What was copied', BackupReply), ...errorResponses(ROUTE_ERRORS.body) },
      }),
    },
    '/v1/admin/database/backup/file': {
      post: admin(
        'An online, consistent backup of the store sent as the body (admin): what `cairn database backup` writes to DEST itself; header x-cairn-backup: {txn, pages, bytes, sha256}',
        {
          responses: {
            '200': {
              description: 'The backup’s data file (`data.cairn`)',
              content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
            },
            ...errorResponses(ROUTE_ERRORS.token),
          },
        },
      ),
    },
    '/v1/admin/database/compact': {
      post: admin('Rewrite the store compactly; with purge, zero freed space and the log (admin)', {
        requestBody: { required: true, ...json(jsonSchemaOf(CompactInput)) },
        responses: { ...ok('What the compaction changed', CompactReply), ...errorResponses(ROUTE_ERRORS.body) },
      }),
    },
    '/v1/admin/import': {
      post: admin(
        'Import an export file (admin), read as it arrives: an empty scope takes its first piece (a sixteenth of memory, 64 MiB to 1 GiB, or CAIRN_LOAD_PIECE_BYTES) by bulk load and the rest by import page by page; Content-Length required',
        {
          parameters: [
            { name: 'user', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'scope', in: 'query', required: false, schema: { type: 'string' } },
            {
              name: 'empty',
              in: 'query',
              required: false,
              description:
                '`true`: a Memory Package: only into an empty scope (one holding anything is refused), in one transaction, refused whole when a record fails its checks; `pieces`: only into an empty scope, then as a file goes (memory follows the piece; each piece commits alone, a record failing its checks is skipped)',
              schema: { type: 'string', enum: ['true', 'false', 'pieces'] },
            },
          ],
          requestBody: {
            required: true,
            content: {
              'application/x-ndjson': {
                schema: {
                  type: 'string',
                  description:
                    'export records, one a line; a body with no record, or whose first line that is not blank is no record (a JSON object with a kind), is refused (422 naming `body`), nothing stored',
                },
              },
            },
          },
          responses: { ...ok('What was imported', AdminImportReply), ...errorResponses(ROUTE_ERRORS.body) },
        },
      ),
    },
  };
}

/** `/v1/mcp`: MCP over Streamable HTTP; its protocol errors are JSON-RPC errors, not Error. */
function mcpPath(): Record<string, unknown> {
  const rpcError = (description: string) => ({ description, ...json(replyRef(JsonRpcMessage)) });
  return {
    post: {
      summary: 'MCP over Streamable HTTP (JSON-RPC)',
      parameters: IDENTITY_HEADERS,
      requestBody: { required: true, ...json(replyRef(McpRequest)) },
      responses: {
        ...ok('The JSON-RPC reply (Mcp-Session-Id names the session after initialize)', McpReply),
        '202': { description: 'A notification or reply was accepted' },
        '400': rpcError('Not a valid MCP request, or a body that is not JSON (-32700 Parse error) (JSON-RPC error)'),
        '404': rpcError('Session not found: unknown, ended, or opened with another token (JSON-RPC error)'),
        '406': rpcError('Accept must allow application/json and text/event-stream (JSON-RPC error)'),
        ...errorResponses(ROUTE_ERRORS.body),
      },
    },
    delete: {
      summary: 'End an MCP session (Mcp-Session-Id)',
      responses: {
        '200': { description: 'The session ended' },
        '400': rpcError('No Mcp-Session-Id (JSON-RPC error)'),
        '404': rpcError('Session not found (JSON-RPC error)'),
        ...errorResponses(ROUTE_ERRORS.body),
      },
    },
    get: {
      summary: 'No push stream: 405 Allow: POST, DELETE',
      security: [],
      responses: errorResponses(ROUTE_ERRORS.mcpGet),
    },
  };
}

/**
 * The OpenAPI 3.1 document of the HTTP API: request bodies from the verbs' zod input schemas,
 * replies from the zod reply schemas (`reply-schemas.ts`), errors by route (`openapi-errors.ts`).
 */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Cairn', version, description: 'A local-first memory layer for AI agents' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: ERROR_SCHEMA, ...replyComponents() },
    },
    paths: { ...verbPaths(), ...nodePaths(), ...asAgentPaths() },
  };
}
