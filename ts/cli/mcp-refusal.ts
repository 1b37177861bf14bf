import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

import { type ErrorBody, isErrorCode } from '../protocol/errors.js';
import { isLoopback } from '../server/guard.js';
import { CliFailure } from './failure.js';
import { refused, unreachable } from './net-errors.js';
import { seconds } from './node-wait.js';

// What `cairn mcp` says when its node refuses it or is not there: the SDK's transport errors carry
// the node's JSON error inside a text ("Streamable HTTP error: Error POSTing to endpoint: {…}") or
// are a bare "fetch failed"; a person and a model each need what happened and what to do instead.

/** Where the bridge's token comes from, and how to make another one. */
const NEW_TOKEN =
  'make a new token with `cairn token create --agent NAME` (CAIRN_ADMIN_TOKEN set while a node runs) or ' +
  '`cairn connect CLIENT --force`, and give it to `cairn mcp` as CAIRN_TOKEN (in the client config’s env)';

/** The node's DESIGN.md §3 error inside a transport error, with its HTTP status; else null. */
export function nodeRefusal(err: unknown): { status: number; body: ErrorBody } | null {
  if (!(err instanceof StreamableHTTPError) || err.code === undefined || err.code < 400) return null;
  const at = err.message.indexOf('{');
  if (at < 0) return null;
  try {
    const body = JSON.parse(err.message.slice(at)) as Partial<ErrorBody>;
    if (!isErrorCode(body.error?.code)) return null;
    return { status: err.code, body: body as ErrorBody };
  } catch {
    return null;
  }
}

/** What to do about a refusal with `code`, for the token the bridge was given. */
function remedy(code: string): string {
  if (code === 'UNAUTHENTICATED') return NEW_TOKEN;
  if (code === 'FORBIDDEN') {
    return 'CAIRN_TOKEN is not allowed this user or scope (CAIRN_USER, CAIRN_SCOPE): use a token made for them';
  }
  return '';
}

/**
 * The command that starts the node `url` names: on this machine over http, `cairn serve` with the
 * URL's port (found by QA: it was left out, so the advice started a node on 4000 while the bridge
 * kept asking the URL's port); a node elsewhere is started on its own machine.
 */
function serveCommand(url: string, dataDir: string): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' || !isLoopback(u.hostname)) return `\`cairn serve\` on the machine at ${u.host}`;
  const port = u.port === '' ? '80' : u.port;
  return `\`cairn serve --data-dir ${dataDir}${port === '4000' ? '' : ` --port ${port}`}\``;
}

/** Why the bridge's first session with the node at `url` did not open, said with what to run. */
export function cannotConnect(err: unknown, url: string, dataDir: string): string {
  const refusal = nodeRefusal(err);
  if (refusal !== null) {
    const { code, message } = refusal.body.error;
    const then = remedy(code);
    const what = code === 'UNAUTHENTICATED' || code === 'FORBIDDEN' ? 'CAIRN_TOKEN' : 'the session';
    return `the node at ${url} is running but refused ${what}: ${code}: ${message}${then === '' ? '' : `; ${then}`}`;
  }
  if (err instanceof StreamableHTTPError && err.code !== undefined && err.code >= 400) {
    // Another program on that port (a dev server): its error page said nothing to a person here.
    return `the server at ${url} answered HTTP ${err.code} without a Cairn error: is it a Cairn node (check --url, or the port)?`;
  }
  if (refused(err)) {
    return (
      `no node is running at ${url} (connection refused): start one with ${serveCommand(url, dataDir)}, ` +
      'or leave out --url and `cairn mcp` starts one on the data dir'
    );
  }
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    const ms = Number((err.data as { timeout?: unknown } | undefined)?.timeout);
    return (
      `UNAVAILABLE: the node at ${url} does not answer (nothing for ${seconds(ms)}): it may be stopped or hung; ` +
      `restart it (${serveCommand(url, dataDir)})`
    );
  }
  const why = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  if (unreachable(err)) return `cannot reach the node at ${url}: ${why}`;
  // Not a network failure (the request was never sent, or its answer made no sense): saying the
  // node is unreachable would send the user looking in the wrong place.
  return `could not open a session with the node at ${url}: ${why}`;
}

/**
 * The DESIGN.md §3 body of a request's failure, when the node refused the bridge (a revoked token,
 * a rate limit; with what the user has to do) or is gone or cut off (`url`: where it was); null
 * for other failures. `restarts`: the bridge starts a node itself when it finds none (it was given
 * a data dir, not `--url`), so a node gone is not the user's to start.
 */
export function failureBody(err: unknown, url: string, restarts = false): ErrorBody | null {
  const refusal = nodeRefusal(err);
  if (refusal !== null) {
    const { code, message, details } = refusal.body.error;
    const then = remedy(code);
    return { error: { code, message: then === '' ? message : `${message}; ${then}`, details } };
  }
  if (refused(err)) {
    const message = restarts
      ? `no node is running at ${url} (it stopped); the bridge starts one again on the next call`
      : `no node is running at ${url}; the user starts it with \`cairn serve\``;
    return { error: { code: 'UNAVAILABLE', message, details: [] } };
  }
  // The node stopped answering during the request, or cut it off when a repeat was not safe
  // (`NodeLink.request`).
  if (err instanceof CliFailure && err.code === 'UNAVAILABLE') return err.body();
  if (unreachable(err)) {
    const why = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    const message = `cannot reach the node at ${url} (${why}); the user checks that it runs (\`cairn serve\`)`;
    return { error: { code: 'UNAVAILABLE', message, details: [] } };
  }
  return null;
}

/**
 * A tool call's failure as the tool error of DESIGN.md §3 (`isError` with the JSON body), when
 * `failureBody` has one: the model reads the same shape as any refusal of the node's, with what
 * the user has to do. Null for other failures.
 */
export function asToolError(err: unknown, url: string, restarts = false) {
  const body = failureBody(err, url, restarts);
  if (body === null) return null;
  // As the node answers a refused call: the JSON as structuredContent and as one text block.
  const structured = body as unknown as Record<string, unknown>;
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(body) }],
    structuredContent: structured,
    isError: true,
  };
}
