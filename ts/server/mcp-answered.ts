import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';

/** The two maps of the SDK transport (1.32) this reaches into; see `releaseAnswered`. */
interface TransportMaps {
  /** Per POST: the sink its JSON reply resolves (`resolveJson`), or an SSE stream. */
  _streamMapping?: unknown;
  /** Request id → the POST (stream id) whose reply it is still owed in. */
  _requestToStreamMapping?: unknown;
}

/**
 * Drops what the SDK's transport keeps of POSTs whose JSON replies were all sent
 * (modelcontextprotocol/typescript-sdk#2559, open in 1.32.2, the newest v1). In JSON-response
 * mode the transport resolves a POST's reply but leaves that POST's entry in `_streamMapping`, and
 * the entry holds the reply (a `Response` and its body) for as long as the session lives: about
 * 10 KB a tool call, without bound on a session an agent keeps open all day. An entry none of whose
 * requests is still owed (no request id maps to it) is done; the SDK's own fix (#2747) drops it
 * the same way, at the same point. Does nothing when the transport no longer has these maps.
 */
export function releaseAnswered(transport: WebStandardStreamableHTTPServerTransport): void {
  const { _streamMapping: streams, _requestToStreamMapping: owed } = transport as unknown as TransportMaps;
  if (!(streams instanceof Map) || !(owed instanceof Map) || streams.size === 0) return;
  const open = new Set(owed.values());
  for (const [id, entry] of streams) {
    if ((entry as { resolveJson?: unknown }).resolveJson !== undefined && !open.has(id)) streams.delete(id);
  }
}
