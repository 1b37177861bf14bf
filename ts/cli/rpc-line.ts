import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

// What one line a client wrote to `cairn mcp` is: a JSON-RPC message, or the error JSON-RPC 2.0
// answers a line that is none (§5.1: -32700 Parse error, -32600 Invalid Request).

/** A JSON-RPC error reply to a line that is no message. */
export interface LineError {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: -32700 | -32600; message: string };
}

/** The members a JSON-RPC 2.0 message may have (the SDK refuses any other). */
const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/**
 * The id to answer a line by: its own when it reads as a request (a `method`, no `result` or
 * `error`) with a string or number id, so a client waiting on that id is answered; else null, as
 * JSON-RPC answers what it cannot tell the id of. A broken response is never answered by its id:
 * that id is one of this side's requests, and the client would take the error as its reply.
 */
function requestId(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  if (!('method' in value) || 'result' in value || 'error' in value) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** Why `value`, which is JSON, is not a JSON-RPC message the SDK takes. */
function notAMessage(value: unknown): string {
  if (Array.isArray(value)) return 'a batch (a JSON array) is not taken; send each message as a line of its own';
  if (typeof value !== 'object' || value === null) return `a message is a JSON object, got ${JSON.stringify(value)}`;
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).find((k) => !MEMBERS.has(k));
  if (extra !== undefined) return `unknown member ${JSON.stringify(extra)}`;
  if (v.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('method' in v && typeof v.method !== 'string') return '"method" must be a string';
  if ('id' in v && typeof v.id !== 'string' && !Number.isInteger(v.id)) return '"id" must be a string or an integer';
  if ('params' in v && (typeof v.params !== 'object' || v.params === null || Array.isArray(v.params))) {
    return '"params" must be an object';
  }
  return 'not a request ("method" and "id"), a notification ("method") or a response ("id" and "result" or "error")';
}

/**
 * `line` as the JSON-RPC message it holds, or the error that answers it: not JSON, -32700 with id
 * null; JSON but no message the SDK takes (an array, `{"x":1}`, an unknown member), -32600.
 */
export function readLine(line: string): { message: JSONRPCMessage } | { refused: LineError } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const message = `Parse error: the line is not JSON (${why}); send each message as one line of JSON`;
    return { refused: { jsonrpc: '2.0', id: null, error: { code: -32700, message } } };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  const message = `Invalid Request: ${notAMessage(value)}`;
  return { refused: { jsonrpc: '2.0', id: requestId(value), error: { code: -32600, message } } };
}
