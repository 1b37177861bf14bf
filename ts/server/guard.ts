import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';

/** Whether `host` (a bind address) only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether `host` (a bind address) listens on every interface. */
export function isWildcard(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** Whether a peer address is this machine (IPv4, IPv6, or IPv4-mapped IPv6 loopback). */
function fromLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address);
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * DNS-rebinding protection, as the MCP SDK's middleware does it: on a loopback bind the `Host`
 * header must name this machine and port, and an `Origin`, when sent, must too. On a wider bind
 * the hosts come from `allowedHosts` (when given), plus the bind address itself and, on a
 * connection from this machine, the loopback names: that is how the CLI reaches its own node, and
 * a rebound name (the attack) is never a loopback name. An `Origin` must still match the `Host`.
 */
export function hostGuard(opts: { loopback: boolean; allowedHosts: string[]; port: () => number; bind?: string }) {
  const allowed = (local: boolean): Set<string> => {
    const hosts = new Set(opts.allowedHosts.map((h) => h.toLowerCase()));
    const p = opts.port();
    if (opts.loopback || local) for (const h of LOOPBACK_NAMES) hosts.add(`${h}:${p}`);
    const bind = opts.bind?.toLowerCase().replace(/^\[|\]$/g, '');
    if (bind !== undefined && !isWildcard(bind)) hosts.add(`${bind.includes(':') ? `[${bind}]` : bind}:${p}`);
    return hosts;
  };
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const host = (req.headers.host ?? '').toLowerCase();
    const checkHost = opts.loopback || opts.allowedHosts.length > 0;
    const hosts = allowed(fromLoopback(req.socket.remoteAddress));
    if (checkHost && !hosts.has(host)) {
      throw new ApiError('FORBIDDEN', 'Host header not allowed (DNS rebinding protection)');
    }
    const origin = req.headers.origin;
    if (origin === undefined) return;
    let originHost: string;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      throw new ApiError('FORBIDDEN', 'Origin header not allowed');
    }
    if (originHost !== host && !hosts.has(originHost)) throw new ApiError('FORBIDDEN', 'Origin header not allowed');
  };
}
