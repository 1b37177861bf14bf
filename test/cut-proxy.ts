import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * What the proxy does with one request to `/v1/mcp`: pass it on, or end it as a node that stops
 * or restarts does: close the connection before the node got it (a keep-alive connection a
 * draining node closed as idle) or after the node ran it (a node killed before it replied), or
 * answer that the node is shutting down (its `503` while draining).
 */
export type Cut = 'pass' | 'close-before' | 'close-after' | 'shutting-down';

/** A JSON-RPC message as the proxy reads it: enough to pick the requests to cut. */
export interface RpcMessage {
  method?: string;
  params?: { name?: string; arguments?: Record<string, unknown> };
}

/** Sends `req` (its `body` read already) on to `target`; resolves with the node's reply, read whole. */
function forward(
  target: URL,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    // The node checks Host against its own port.
    const headers = { ...req.headers, host: target.host };
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** What the proxy runs after the node ran a request it cuts `close-after`, before it closes the connection. */
type AfterRun = () => Promise<void>;

async function handle(
  target: URL,
  cut: (msg: RpcMessage) => Cut,
  afterRun: AfterRun | undefined,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  let what: Cut = 'pass';
  if (req.method === 'POST' && req.url?.startsWith('/v1/mcp')) what = cut(JSON.parse(body.toString()) as RpcMessage);
  if (what === 'close-before') return void req.socket.destroy();
  if (what === 'shutting-down') {
    res.writeHead(503, { 'content-type': 'application/json', connection: 'close' });
    return void res.end(
      JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'the node is shutting down', details: [] } }),
    );
  }
  const reply = await forward(target, req, body);
  if (what === 'close-after') {
    await afterRun?.();
    return void req.socket.destroy();
  }
  // The reply is read whole: a JSON reply, or an event stream the node ended (not held open).
  const {
    'content-length': _length,
    'transfer-encoding': _encoding,
    connection: _connection,
    ...headers
  } = reply.headers;
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/**
 * An HTTP proxy on a free loopback port in front of the node at `target`, which passes every
 * request on except the MCP requests `cut` picks: the failures a bridge sees when its node stops
 * or restarts, made to happen exactly when a test wants them. `afterRun` (say, restarting the node)
 * runs between a `close-after` request's run and its connection's end.
 */
export async function cutProxy(target: string, cut: (msg: RpcMessage) => Cut, afterRun?: AfterRun) {
  const to = new URL(target);
  const server = createServer((req, res) => {
    handle(to, cut, afterRun, req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
