// A `fetch` for the MCP SDK's Streamable HTTP client transport over one keep-alive `node:http`
// agent. Node's built-in fetch (undici) costs about as much per call as a Cairn tool call itself;
// a long-lived agent client (what a desktop MCP host holds) does not, so the bench reports Cairn
// through both, and the reference server's stdio pipe through the SDK's own stdio transport.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Same contract as `fetch(url, init)` for what the SDK sends: string bodies, plain headers. The
 * SDK's abort signal is not wired: the bench never aborts a call, and `node:http` would keep a
 * listener on that long-lived signal per request.
 */
export function keepAliveFetch(url, init = {}) {
  const target = new URL(url);
  const headers = new Headers(init.headers);
  const body = init.body ?? undefined;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? 'GET',
        headers: Object.fromEntries(headers),
        agent,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
          }
          const status = res.statusCode ?? 500;
          const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(payload, { status, headers: out }));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
