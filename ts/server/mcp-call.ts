import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol, type RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

import { ApiError } from '../protocol/errors.js';

// `tools/call` as both MCP servers (the node's and the `cairn mcp` bridge's) take it. The SDK's
// schema wants `arguments` to be an object: a string (JSON encoded twice, as some hosts and
// models send it), an array or null failed its parse as a JSON-RPC -32603 "internal error"
// carrying the raw zod issues, which a model cannot act on (found by an audit). Read loosely,
// they reach the server's handler and are refused as a tool error, as any bad input is.

const LooseCallToolRequest = CallToolRequestSchema.extend({
  params: CallToolRequestParamsSchema.extend({ arguments: z.unknown().optional() }),
});

/** A tool call whose `arguments` are an object (or absent, read as `{}` by the node). */
export interface ToolCall {
  name: string;
  arguments: Record<string, unknown> | undefined;
}

/** The JSON of a reply as MCP wants it: the same object as structuredContent and one text block. */
export function toolResult(body: Record<string, unknown>, isError = false): CallToolResult {
  return {
    content: [{ type: 'text' as const, text: JSON.stringify(body) }],
    structuredContent: body,
    ...(isError ? { isError: true } : {}),
  };
}

/** The VALIDATION_ERROR of `arguments` that are not an object, or null when they are one (or absent). */
function notAnObject(args: unknown): ApiError | null {
  if (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args))) return null;
  const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
  const hint = typeof args === 'string' ? ' (JSON sent as a string: send the object itself)' : '';
  const message = `arguments must be an object of the tool's fields, got ${got}${hint}`;
  return new ApiError('VALIDATION_ERROR', message, [{ field: 'arguments', message }]);
}

/**
 * Installs `handle` for `tools/call` on `server`; `arguments` that are not an object are answered
 * as a VALIDATION_ERROR tool result naming `arguments` without reaching it. Installed through
 * Protocol's own method: Server's wraps the handler in a parse with the SDK's strict schema,
 * which would refuse them before any handler sees them.
 */
export function onToolCall(
  server: Server,
  handle: (
    call: ToolCall,
    extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
    // A CallToolResult; the bridge's are the node's, passed on as they came.
  ) => unknown,
): void {
  Protocol.prototype.setRequestHandler.call(server, LooseCallToolRequest, (req, extra) => {
    const { name, arguments: args } = req.params;
    const refused = notAnObject(args);
    if (refused !== null) return toolResult(refused.body() as unknown as Record<string, unknown>, true);
    return handle({ name, arguments: args as Record<string, unknown> | undefined }, extra);
  });
}
