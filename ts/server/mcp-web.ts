import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The node request as the `Request` the SDK's web-standard Streamable HTTP transport reads: its
 * method, headers and URL (the body is passed already parsed). The SDK's node transport makes the
 * same through @hono/node-server per call, with a lazy request, a response read back through a
 * web stream and a request listener built anew for each call; this does the least of that.
 */
export function webRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return new Request(urlOf(req), { method: req.method ?? 'POST', headers });
}

/** The request's absolute URL: its Host when that makes a valid one, else localhost's. */
function urlOf(req: IncomingMessage): string {
  const path = req.url ?? '/';
  if (req.headers.host !== undefined && URL.canParse(`http://${req.headers.host}${path}`)) {
    return `http://${req.headers.host}${path}`;
  }
  return new URL(path, 'http://localhost').href;
}

/**
 * Writes the transport's answer. In the JSON-response form the node uses every answer is whole (a
 * JSON body, or none for 202 and DELETE), so it is read at once and sent with its length, with
 * the node's own `extra` headers (the rate limit's).
 */
export async function sendWebResponse(
  res: ServerResponse,
  answer: Response,
  extra: Record<string, string> = {},
): Promise<void> {
  const headers: Record<string, string> = { ...extra };
  answer.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (answer.body === null) {
    res.writeHead(answer.status, headers).end();
    return;
  }
  const body = Buffer.from(await answer.arrayBuffer());
  headers['content-length'] = String(body.length);
  res.writeHead(answer.status, headers).end(body);
}
