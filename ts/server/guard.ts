import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';
import { machineHosts } from './machine-hosts.js';

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
 * DNS-rebinding protection, always on. The `Host` header must name this node with its port, and an
 * `Origin`, when sent, must match the `Host` or name this node too. On a loopback bind the names are
 * the loopback names. On a wider bind they are the machine's own addresses and host name (what
 * clients on the network use), plus, on a connection from this machine, the loopback names: that is
 * how the CLI reaches its own node, and a rebound name (the attack) is never one of these. On
 * either bind `allowedHosts` (CAIRN_ALLOWED_HOSTS) adds names, e.g. one a reverse proxy forwards.
 */
export function hostGuard(opts: { loopback: boolean; allowedHosts: string[]; port: () => number; bind?: string }) {
  const machine = opts.loopback || opts.bind === undefined ? null : machineHosts(opts.bind);
  const allowed = (local: boolean): Set<string> => {
    const p = opts.port();
    const hosts = machine?.(p) ?? new Set<string>();
    for (const h of opts.allowedHosts) hosts.add(h.toLowerCase());
    if (opts.loopback || local) for (const h of LOOPBACK_NAMES) hosts.add(`${h}:${p}`);
    return hosts;
  };
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const host = (req.headers.host ?? '').toLowerCase();
    const hosts = allowed(fromLoopback(req.socket.remoteAddress));
    if (!hosts.has(host)) {
      throw new ApiError('FORBIDDEN', 'Host header not allowed (DNS rebinding protection)', [
        { field: 'Host', message: 'not a name of this node; add it to CAIRN_ALLOWED_HOSTS' },
      ]);
    }
    const origin = req.headers.origin;
    if (origin === undefined) return;
    let originHost: string;
    try {
      originHost = new URL(origin).host.toLowerCase();
    } catch {
      throw new ApiError('FORBIDDEN', 'Origin header not allowed', [{ field: 'Origin', message: 'not a URL' }]);
    }
    if (originHost !== host && !hosts.has(originHost)) {
      throw new ApiError('FORBIDDEN', 'Origin header not allowed', [
        { field: 'Origin', message: 'names neither the Host nor this node' },
      ]);
    }
  };
}
