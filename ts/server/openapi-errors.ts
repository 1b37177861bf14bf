import { ERROR_STATUS, type ErrorCode } from '../protocol/errors.js';

/** What each error code means on the wire, as the document says it. */
const MEANING: Record<ErrorCode, string> = {
  UNAUTHENTICATED: 'no, unknown or revoked token (with WWW-Authenticate: Bearer)',
  FORBIDDEN: 'Host or Origin not this node, or the user, scope or role is not allowed by the token',
  NOT_FOUND: 'nothing of that name; details may carry "did you mean" names',
  METHOD_NOT_ALLOWED: 'no push stream (Allow: POST, DELETE)',
  VERSION_CONFLICT: 'expectedVersion is not the current version (details: currentVersion, agent, updatedAt)',
  IDEMPOTENCY_CONFLICT: 'this idempotencyKey was used with another body (details: the receipt of what it wrote)',
  PAYLOAD_TOO_LARGE: 'the body is larger than this node accepts',
  UNSUPPORTED_MEDIA_TYPE: 'the body is not of the type this route reads',
  VALIDATION_ERROR: 'a field is refused: message and details name it',
  DOCUMENT_CORRUPT: 'the document is truncated or corrupt',
  DOCUMENT_NOT_READABLE: 'the document is encrypted or scanned',
  RATE_LIMITED: "over this token's requests a minute",
  INTERNAL: 'an internal failure (no internals in the reply; the log has the cause)',
  UNAVAILABLE: 'the node is shutting down',
};

// Which failures each kind of route can answer (docs/api.md). Every route is behind the Host/Origin
// guard and the drain; every route but the open ones counts against the token's rate limit.
const ANY: ErrorCode[] = ['FORBIDDEN', 'INTERNAL', 'UNAVAILABLE'];
const LIMITED: ErrorCode[] = [...ANY, 'RATE_LIMITED'];
const TOKEN: ErrorCode[] = [...LIMITED, 'UNAUTHENTICATED'];
const BODY: ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_ERROR'];

/** The failures of each route, by kind. */
export const ROUTE_ERRORS = {
  /** /health, /v1/openapi.json, /docs: no token, no rate limit. */
  open: ANY,
  /** GET /v1/mcp: refused before auth, not counted (an MCP client's push-stream probe). */
  mcpGet: [...ANY, 'METHOD_NOT_ALLOWED'],
  /** A GET with a token; identity headers (and a query string) are checked. */
  tokenGet: [...TOKEN, 'VALIDATION_ERROR'],
  /** A GET with a token and no input (the admin GETs). */
  token: TOKEN,
  /** A route that reads a body: every POST, and a DELETE that is sent one. */
  body: [...TOKEN, ...BODY],
  /** DELETE /v1/admin/tokens/{id}: also no such token. */
  revoke: [...TOKEN, ...BODY, 'NOT_FOUND'],
} satisfies Record<string, ErrorCode[]>;

/** What the verbs add to `body`: the engine's refusals. */
export const VERB_ERRORS: Partial<Record<string, ErrorCode[]>> = {
  forget: ['NOT_FOUND'],
  delete_user: ['NOT_FOUND'],
  /** `history {fact}` of a fact never stored, as `forget {fact}` answers it. */
  history: ['NOT_FOUND'],
  note_write: ['VERSION_CONFLICT', 'IDEMPOTENCY_CONFLICT'],
  handoff_create: ['IDEMPOTENCY_CONFLICT'],
  document: ['DOCUMENT_CORRUPT', 'DOCUMENT_NOT_READABLE'],
};

/** The OpenAPI responses of `codes`: one per status, its description naming every code it carries. */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status) ?? [];
    out[String(status)] = {
      description: list.map((c) => `${c}: ${MEANING[c]}`).join('; '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return out;
}
