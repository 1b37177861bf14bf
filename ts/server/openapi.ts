import { TokenCreateInput } from '../protocol/admin.js';
import { jsonSchemaOf } from '../protocol/json-schema.js';
import { VERBS } from '../protocol/verbs.js';

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

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const ERRORS = {
  '401': errorResponse('UNAUTHENTICATED: no, unknown or revoked token'),
  '403': errorResponse('FORBIDDEN: user, scope or role not allowed by the token'),
  '404': errorResponse('NOT_FOUND'),
  '413': errorResponse('PAYLOAD_TOO_LARGE'),
  '422': errorResponse('VALIDATION_ERROR: details name the field'),
  '429': errorResponse('RATE_LIMITED'),
  '500': errorResponse('INTERNAL'),
};

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const IDENTITY_HEADERS = [
  { name: 'X-Cairn-User', in: 'header', required: false, schema: { type: 'string' }, description: 'User; wins' },
  { name: 'X-Cairn-Scope', in: 'header', required: false, schema: { type: 'string' }, description: 'Default scope' },
];

/** The OpenAPI 3.1 document of the HTTP API, generated from the same zod schemas as the tools. */
export function openApiDocument(version: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const spec of VERBS) {
    const op = {
      operationId: spec.tool ?? spec.verb,
      summary: spec.title,
      description: spec.description,
      parameters: IDENTITY_HEADERS,
      requestBody: { required: true, ...json(jsonSchemaOf(spec.input)) },
      responses: { '200': { description: 'The verb’s reply (DESIGN.md §2)', ...json({ type: 'object' }) }, ...ERRORS },
    };
    paths[`/v1/memory/${spec.verb}`] =
      spec.verb === 'status' ? { post: op, get: { ...op, requestBody: undefined } } : { post: op };
  }
  paths['/health'] = {
    get: { summary: 'Liveness (no token)', security: [], responses: { '200': { description: 'ok' } } },
  };
  paths['/v1/whoami'] = {
    get: { summary: 'The identity this token and these headers resolve to', responses: { '200': json({}) } },
  };
  paths['/v1/mcp'] = {
    post: { summary: 'MCP over Streamable HTTP (JSON-RPC)', responses: { '200': { description: 'JSON-RPC' } } },
    delete: { summary: 'End an MCP session', responses: { '200': { description: 'ended' } } },
    get: { summary: 'No push stream: 405 Allow: POST, DELETE', security: [], responses: { '405': ERRORS['401'] } },
  };
  paths['/v1/admin/tokens'] = {
    get: { summary: 'List tokens (admin)', responses: { '200': json({ type: 'object' }), ...ERRORS } },
    post: {
      summary: 'Create a token (admin); the token is shown once',
      requestBody: { required: true, ...json(jsonSchemaOf(TokenCreateInput)) },
      responses: { '200': json({ type: 'object' }), ...ERRORS },
    },
  };
  paths['/v1/admin/tokens/{id}'] = {
    delete: {
      summary: 'Revoke a token (admin)',
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': json({ type: 'object' }), ...ERRORS },
    },
  };
  paths['/v1/admin/check'] = {
    get: {
      summary: "The integrity report of the node's store (admin): what `cairn check` prints",
      responses: { '200': json({ type: 'object' }), ...ERRORS },
    },
  };
  paths['/v1/admin/import'] = {
    post: {
      summary: 'Import an export file (admin): a bulk load into an empty scope, else import page by page',
      parameters: [
        { name: 'user', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'scope', in: 'query', required: false, schema: { type: 'string' } },
      ],
      requestBody: {
        required: true,
        content: { 'application/x-ndjson': { schema: { type: 'string', description: 'export records, one a line' } } },
      },
      responses: { '200': json({ type: 'object' }), ...ERRORS },
    },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'Cairn', version, description: 'A local-first memory layer for AI agents' },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
