import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';
import { storeFailure } from '../service/engine.js';

/** The header a 401 carries (DESIGN.md §4): bearer tokens, not OAuth. */
export const WWW_AUTHENTICATE = 'Bearer realm="cairn", error="invalid_token"';

/** Fastify's own errors by code, in the product's terms. */
const FASTIFY_CODES: Record<string, () => ApiError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new ApiError('PAYLOAD_TOO_LARGE', 'the body is larger than this node accepts'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'send Content-Type: application/json'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new ApiError('VALIDATION_ERROR', '(body): wrong Content-Length'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new ApiError('VALIDATION_ERROR', '(body): empty; send a JSON object', [{ field: '(body)', message: 'empty' }]),
  FST_ERR_CTP_INVALID_JSON_BODY: () =>
    new ApiError('VALIDATION_ERROR', '(body): not valid JSON', [{ field: '(body)', message: 'not valid JSON' }]),
};

/**
 * Any thrown value as an ApiError: ours pass through, fastify's and the engine's are mapped, and
 * anything else is INTERNAL with no internals in the reply (`log` sees the original).
 */
export function toApiError(err: unknown, log: (err: unknown) => void): ApiError {
  if (err instanceof ApiError) {
    // A store failure was mapped on its way up; its cause is what the log needs.
    if (err.code === 'INTERNAL' && err.cause !== undefined) log(err.cause);
    return err;
  }
  const code = (err as FastifyError | undefined)?.code;
  const mapped = code === undefined ? undefined : FASTIFY_CODES[code];
  if (mapped !== undefined) return mapped();
  if (err instanceof SyntaxError) return FASTIFY_CODES.FST_ERR_CTP_INVALID_JSON_BODY?.() as ApiError;
  const api = storeFailure(err);
  if (api.code === 'INTERNAL' || api.code === 'UNAVAILABLE') log(err);
  return api;
}

/** Sends `err` as `{"error": …}` with its status (and the bearer challenge on a 401). */
export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  if (err.status === 401) reply.header('WWW-Authenticate', WWW_AUTHENTICATE);
  return reply.code(err.status).type('application/json').send(err.body());
}

/** The app's error handler. */
export function errorHandler(this: unknown, err: unknown, req: FastifyRequest, reply: FastifyReply) {
  const api = toApiError(err, (e) => req.log.error({ err: e }, 'request failed'));
  return sendError(reply, api);
}
