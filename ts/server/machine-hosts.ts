import { hostname, networkInterfaces } from 'node:os';

/** How long the interface list is reused: addresses change rarely (DHCP), requests often. */
const REFRESH_MS = 10_000;

/** `address` as it appears in a Host header or URL: IPv6 in brackets. */
export function hostForm(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/**
 * The addresses a node bound to `bind` is reachable at from other machines: on a wildcard bind
 * every non-loopback interface address of the family it listens on (`::` takes both), else the
 * bind address itself. Link-local IPv6 addresses are left out: a URL cannot name them without a
 * zone, which browsers and Host headers do not carry.
 */
export function reachableAddresses(bind: string): string[] {
  const b = bind.replace(/^\[|\]$/g, '');
  if (b !== '0.0.0.0' && b !== '::') return [b];
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && !a.internal)
    .filter((a) => a?.family === 'IPv4' || (b === '::' && !a?.address.toLowerCase().startsWith('fe80:')))
    .map((a) => a?.address as string);
}

/**
 * The Host values (`host:port`, lower case) that name this machine on a wider bind: its reachable
 * addresses and its host name. A DNS-rebinding page sends the attacker's own name, which is none of
 * these; a client on the network uses one of them (or a name the operator adds in CAIRN_ALLOWED_HOSTS).
 */
export function machineHosts(bind: string): (port: number) => Set<string> {
  let cached: { at: number; names: string[] } | undefined;
  return (port) => {
    const now = Date.now();
    if (cached === undefined || now - cached.at > REFRESH_MS) {
      cached = { at: now, names: [...reachableAddresses(bind).map(hostForm), hostname()].map((h) => h.toLowerCase()) };
    }
    return new Set(cached.names.map((h) => `${h}:${port}`));
  };
}
