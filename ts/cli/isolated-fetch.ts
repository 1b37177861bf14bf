/**
 * `fetch` for the MCP SDK's Streamable HTTP client transport, giving each request an abort signal
 * of its own. The transport passes one long-lived signal (aborted when it closes) to every fetch,
 * and Node's fetch (undici) adds an `abort` listener to that signal per request that it never
 * removes while the signal lives: a bridge that stays up for a desktop session grows that list by
 * one per tool call, makes every later call slower (adding a listener walks the list) and prints
 * `MaxListenersExceededWarning` after 1,500 calls (nodejs/node#52635). Here the long-lived signal
 * holds one listener, which aborts the requests open when it fires: a request counts as open until
 * the reply's headers for a whole (JSON) reply, which the transport reads at once; for an event
 * stream, for as long as the stream may run, so closing the transport still ends it.
 */
export function isolatedFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const parent = init?.signal;
    if (parent === undefined || parent === null || parent.aborted) return base(input, init);
    const own = new AbortController();
    const open = openRequests(parent);
    open.add(own);
    const release = () => open.delete(own);
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

/** The open requests of each long-lived signal, which holds one listener that aborts them all. */
const OPEN = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * The set of `parent`'s open requests. One listener a signal, however many requests are open at
 * once: a listener per open request passed Node's default of ten with a client's parallel tool
 * calls, and the bridge printed `MaxListenersExceededWarning` on stderr for what was no leak.
 */
function openRequests(parent: AbortSignal): Set<AbortController> {
  let open = OPEN.get(parent);
  if (open === undefined) {
    const requests = new Set<AbortController>();
    parent.addEventListener(
      'abort',
      () => {
        for (const own of requests) own.abort(parent.reason);
        requests.clear();
      },
      { once: true },
    );
    OPEN.set(parent, requests);
    open = requests;
  }
  return open;
}
