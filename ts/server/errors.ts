import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

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
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  return reply.code(err.status).type('application/json').send(err.body());
}

/**
 * A body past the route's limit, saying the limit: "larger than this node accepts" alone left a
 * caller to guess how much less to send (a new-user audit).
 */
function tooLarge(limit: number): ApiError {
  const mib = limit / (1024 * 1024);
  const size = Number.isInteger(mib) ? `${mib} MiB` : `${limit} bytes`;
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    `the body is larger than this node accepts (${size}): send less in one call`,
  );
}

/** The app's error handler. */
export function errorHandler(this: unknown, err: unknown, req: FastifyRequest, reply: FastifyReply) {
  const limit = req.routeOptions.bodyLimit;
  if ((err as FastifyError | undefined)?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && limit !== undefined) {
    return sendError(reply, tooLarge(limit));
  }
  const api = toApiError(err, (e) => req.log.error({ err: e }, 'request failed'));
  return sendError(reply, api);
}

/** Sends `err`'s §3 body with an HTTP status of its own (a malformed request has no DESIGN status). */
function sendWithStatus(reply: FastifyReply, status: number, err: ApiError): FastifyReply {
  return reply.code(status).type('application/json').send(err.body());
}

/**
 * Fastify's framework errors (`frameworkErrors`: a bad percent-escape in the path, a path
 * parameter too long, …) in DESIGN §3's shape: 400 `VALIDATION_ERROR` naming `(url)`, the status
 * an unreadable request line gets (no route was reached to answer 422 for a field).
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  if (err.code === 'FST_ERR_BAD_URL') {
    const message = 'not a valid URL: a "%" must start an escape %XX of UTF-8 bytes';
    return sendWithStatus(
      reply,
      400,
      new ApiError('VALIDATION_ERROR', `(url): ${message}`, [{ field: '(url)', message }]),
    );
  }
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const message = 'a path segment is longer than this node accepts';
    return sendWithStatus(
      reply,
      414,
      new ApiError('VALIDATION_ERROR', `(url): ${message}`, [{ field: '(url)', message }]),
    );
  }
  return sendWithStatus(
    reply,
    400,
    new ApiError('VALIDATION_ERROR', `(request): ${err.message}`, [{ field: '(request)', message: err.message }]),
  );
}

/** What a request Node's HTTP parser refused gets, by its error code: status, the field named, and why. */
const CLIENT_FAILURES: Record<string, { status: number; field: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    field: '(headers)',
    message: 'the request headers are larger than this node accepts (16 KiB)',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, field: '(request)', message: 'the request did not arrive in time' },
  HPE_INVALID_URL: {
    status: 400,
    field: '(url)',
    message: 'not a valid URL: percent-encode anything but printable ASCII (café is caf%C3%A9)',
  },
  HPE_INVALID_HEADER_TOKEN: {
    status: 400,
    field: '(headers)',
    message: 'a header name or value holds a character HTTP does not allow',
  },
};

function clientFailure(code: string | undefined): { status: number; field: string; message: string } {
  const known = code === 'HPE_INVALID_PATH' ? 'HPE_INVALID_URL' : code;
  return (
    (known !== undefined && Object.hasOwn(CLIENT_FAILURES, known) ? CLIENT_FAILURES[known] : undefined) ?? {
      status: 400,
      field: '(request)',
      message: 'not a valid HTTP request',
    }
  );
}

/**
 * Node's `clientError` (a request its HTTP parser refused, before fastify sees it): the §3 body
 * written on the socket, which is then closed. Headers over 16 KiB are 431, a late request 408,
 * anything else 400; all `VALIDATION_ERROR` (DESIGN has no code of its own for these).
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, field, message } = clientFailure(err.code);
  const body = JSON.stringify(new ApiError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message }]).body());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
