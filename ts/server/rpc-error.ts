/**
 * A JSON-RPC error for a request handler to throw. Not an `McpError`: that puts "MCP error CODE: "
 * into its message, which the SDK sends as is and the client prefixes again.
 */
export function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), { code, ...(data === undefined ? {} : { data }) });
}
