/**
 * `fetch` for the MCP SDK's Streamable HTTP client transport, giving each request an abort signal
 * of its own. The transport passes one long-lived signal (aborted when it closes) to every fetch,
 * and Node's fetch (undici) adds an `abort` listener to that signal per request that it never
 * removes while the signal lives: a bridge that stays up for a desktop session grows that list by
 * one per tool call, makes every later call slower (adding a listener walks the list) and prints
 * `MaxListenersExceededWarning` after 1,500 calls (nodejs/node#52635). Here the long-lived signal
 * holds one listener per request only while the request is open: until the reply's headers for
 * a whole (JSON) reply, which the transport reads at once; for an event stream, for as long as
 * the stream may run, so closing the transport still ends it.
 */
export function isolatedFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const parent = init?.signal;
    if (parent === undefined || parent === null || parent.aborted) return base(input, init);
    const own = new AbortController();
    const forward = () => own.abort(parent.reason);
    parent.addEventListener('abort', forward, { once: true });
    const release = () => parent.removeEventListener('abort', forward);
    try {
      const res = await base(input, { ...init, signal: own.signal });
      if (!res.headers.get('content-type')?.includes('text/event-stream')) release();
      return res;
    } catch (err) {
      release();
      throw err;
    }
  };
}
