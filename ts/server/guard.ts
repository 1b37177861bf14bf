import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';

/** Whether `host` (a bind address) only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * DNS-rebinding protection, as the MCP SDK's middleware does it: on a loopback bind the `Host`
 * header must name this machine and port, and an `Origin`, when sent, must too. On a wider bind
 * the hosts come from `allowedHosts` (when given); an `Origin` must still match the `Host`.
 */
export function hostGuard(opts: { loopback: boolean; allowedHosts: string[]; port: () => number }) {
  const allowed = (): Set<string> => {
    const hosts = new Set(opts.allowedHosts.map((h) => h.toLowerCase()));
    if (opts.loopback) {
      const p = opts.port();
      for (const h of ['127.0.0.1', 'localhost', '[::1]']) hosts.add(`${h}:${p}`);
    }
    return hosts;
  };
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const host = (req.headers.host ?? '').toLowerCase();
    const hosts = allowed();
    const checkHost = opts.loopback || hosts.size > 0;
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
