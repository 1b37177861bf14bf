import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

import type { FastifyInstance } from 'fastify';

import { ApiError } from '../protocol/errors.js';

/** How long a stopping node gives connections that carry no request being handled (`registerDrain`). */
export const DRAIN_GRACE_MS = 5_000;

/**
 * How a stopping node lets go of its connections, so in-flight requests (and their writes) finish
 * and are answered and the process still exits promptly. Fastify's close stops listening, closes
 * the connections idle at that moment and then waits for every other one to end, which was left
 * to clients:
 * - a reply still being made when the drain starts is sent with `Connection: close`, so its
 *   connection ends with it. Fastify's hooks cannot do this for MCP's replies, written past them
 *   (hijacked): such a connection stayed open for the client's keep-alive, about 70 s with Node's
 *   fetch (the MCP SDK's), and the node with it;
 * - a reply already being sent (a backup's body) ends its connection once sent: it was idle then,
 *   after the one close of idle connections;
 * - a request that arrives during the drain is refused 503 `UNAVAILABLE`, its connection closed;
 * - after `graceMs`, every connection whose request is not being handled is closed: a client
 *   stalled mid-request, or not reading its reply, would otherwise keep the node up for ever. A
 *   request whose handler still runs (a write in the engine, an import reading its body) is
 *   waited for, however long.
 */
export function registerDrain(app: FastifyInstance, graceMs = DRAIN_GRACE_MS): void {
  const sockets = new Set<Socket>();
  const replies = new Set<ServerResponse>();
  /** Replies whose handler has been reached: the request is whole and being worked on. */
  const handled = new WeakSet<ServerResponse>();
  let closing = false;
  let grace: NodeJS.Timeout | undefined;
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  app.server.on('request', (_req, res: ServerResponse) => {
    replies.add(res);
    res.once('close', () => replies.delete(res));
  });
  app.addHook('preHandler', async (_req, reply) => {
    handled.add(reply.raw);
  });
  // Runs before fastify closes the listener and the idle connections.
  app.addHook('preClose', async () => {
    closing = true;
    for (const res of replies) {
      if (!res.headersSent) {
        res.setHeader('Connection', 'close');
      } else {
        const socket = res.socket;
        res.once('finish', () => socket?.end());
      }
    }
    grace = setTimeout(() => {
      const working = new Set<Socket | null>();
      for (const res of replies) if (handled.has(res) && !res.headersSent) working.add(res.socket);
      for (const socket of sockets) if (!working.has(socket)) socket.destroy();
    }, graceMs);
    grace.unref();
  });
  app.addHook('onClose', async () => clearTimeout(grace));
  app.addHook('onRequest', async (_req, reply) => {
    if (!closing) return;
    reply.header('Connection', 'close');
    throw new ApiError('UNAVAILABLE', 'the node is shutting down');
  });
}
