// What a failed request to the node says about the request, read from Node's fetch (undici)
// errors: `TypeError: fetch failed` with the system or undici error as its `cause` (an
// `AggregateError` in `errors` when every address of a name was tried).

/** Whether `err`, or an error inside it, has a `code` that `is` accepts. */
function hasCode(err: unknown, is: (code: unknown) => boolean, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (is(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => hasCode(x, is, depth + 1))) return true;
  return hasCode(e.cause, is, depth + 1);
}

/** Whether `err` is a refused TCP connection: nothing reached the node. */
export function refused(err: unknown): boolean {
  return hasCode(err, (code) => code === 'ECONNREFUSED');
}

/**
 * Codes of a connection that closed (or was reset) after it was open, before the reply came. The
 * request may not have reached the node (a keep-alive connection the node closed as idle while it
 * was being sent: what a node stopping gracefully does), or it may have reached it and run (a node
 * killed while running it): the client cannot tell which.
 */
const CLOSED = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** Whether `err` is a connection to the node that closed before the reply: see `CLOSED`. */
export function connectionLost(err: unknown): boolean {
  return hasCode(err, (code) => typeof code === 'string' && CLOSED.has(code));
}

/** Codes of a network that did not carry the request or its answer (besides `CLOSED`). */
const NETWORK = new Set([
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Whether `err` is any network failure between the bridge and the node. */
export function unreachable(err: unknown): boolean {
  return refused(err) || connectionLost(err) || hasCode(err, (code) => typeof code === 'string' && NETWORK.has(code));
}
