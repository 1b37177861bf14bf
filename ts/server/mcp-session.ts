import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';

/** The session ended (closed by DELETE, evicted, or the node shutting down) while a request was open. */
export class SessionClosed extends Error {
  constructor() {
    super('Session not found');
  }
}

/** A request id that is already waiting for its reply in this session. */
export class DuplicateRequestId extends Error {
  constructor(id: RequestId) {
    super(`Invalid Request: request id ${JSON.stringify(id)} is already in flight in this session`);
  }
}

interface Waiting {
  resolve: (reply: JSONRPCMessage) => void;
  reject: (err: Error) => void;
}

/**
 * One MCP session's channel under the SDK's `Server`, for Streamable HTTP in its JSON-response
 * form: a POST delivers its messages and is answered with one JSON body once every request in it
 * has its reply. It stands in for the SDK's `StreamableHTTPServerTransport` (JSON mode), which
 * turns every Node request and reply into web-standard Request/Response objects first: that
 * conversion costs about 0.3 ms of CPU a call on these machines (the SDK server floor in
 * bench/mcp-floor.mjs against the same Server on this channel), a quarter of a whole
 * `memory_recall`. The protocol stays the SDK's: `Server` parses, validates and dispatches every
 * message; the HTTP rules (headers, sessions, status codes) are in `mcp.ts`.
 *
 * Messages the server starts itself (progress, logging, requests to the client) have no stream to
 * go to, as with the SDK transport in JSON mode without a GET stream, and are dropped.
 */
export class JsonSession implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly waiting = new Map<RequestId, Waiting>();
  private closed = false;

  constructor(readonly sessionId: string) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = message.id;
    if (id === undefined) return;
    const w = this.waiting.get(id);
    if (w === undefined) return;
    this.waiting.delete(id);
    w.resolve(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of open) w.reject(new SessionClosed());
    this.onclose?.();
  }

  /**
   * Delivers one POST's messages in order and resolves with the replies to its requests, in the
   * order the requests came; an empty list when it held only notifications and responses.
   */
  exchange(messages: JSONRPCMessage[], extra: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    if (this.closed) return Promise.reject(new SessionClosed());
    const ids = new Set<RequestId>();
    for (const m of messages) {
      if (!isJSONRPCRequest(m)) continue;
      if (ids.has(m.id) || this.waiting.has(m.id)) return Promise.reject(new DuplicateRequestId(m.id));
      ids.add(m.id);
    }
    const replies = [...ids].map(
      (id) => new Promise<JSONRPCMessage>((resolve, reject) => this.waiting.set(id, { resolve, reject })),
    );
    for (const m of messages) this.onmessage?.(m, extra);
    return Promise.all(replies);
  }
}
