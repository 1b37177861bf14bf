import type { FastifyRequest } from 'fastify';

import { ApiError } from '../protocol/errors.js';

/** Where `parseQuery` leaves the parameters it could not decode (not enumerable: no schema sees it). */
const UNDECODABLE = Symbol('cairn.undecodableQuery');

const utf8 = new TextDecoder('utf-8', { fatal: true });

const HOW = 'percent-encode the UTF-8 bytes of the text (café is caf%C3%A9)';

/** A query string component (`+` is a space, `%XX` a byte) as text, or why it is none. */
function decode(part: string): { ok: true; value: string } | { ok: false; message: string } {
  const plus = part.replace(/\+/g, ' ');
  if (!plus.includes('%')) return { ok: true, value: plus };
  if (/%(?![0-9A-Fa-f]{2})/.test(plus)) return { ok: false, message: `a "%" that is not an escape %XX: ${HOW}` };
  const bytes: Buffer[] = [];
  for (const m of plus.matchAll(/((?:%[0-9A-Fa-f]{2})+)|([^%]+)/g)) {
    bytes.push(m[1] !== undefined ? Buffer.from(m[1].replace(/%/g, ''), 'hex') : Buffer.from(m[2] ?? '', 'utf8'));
  }
  try {
    return { ok: true, value: utf8.decode(Buffer.concat(bytes)) };
  } catch {
    return { ok: false, message: `its percent-encoded bytes are not valid UTF-8: ${HOW}` };
  }
}

/**
 * The query string as fields (a repeated name gives an array), each name and value decoded as
 * UTF-8 and nothing else: a value whose escapes are not UTF-8 (`?scope=%E9`) is not taken as the
 * literal text `%E9`, as the default parser would, but kept aside so `refuseUndecodableQuery`
 * answers 422 naming it (the router calls this parser, where a throw would not become a reply).
 */
export function parseQuery(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  const bad: { field: string; message: string }[] = [];
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    const key = decode(rawKey);
    if (!key.ok) {
      bad.push({ field: rawKey, message: `the parameter name: ${key.message}` });
      continue;
    }
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    if (!value.ok) {
      bad.push({ field: key.value, message: value.message });
      continue;
    }
    const had = out[key.value];
    out[key.value] = had === undefined ? value.value : Array.isArray(had) ? [...had, value.value] : [had, value.value];
  }
  if (bad.length > 0) Object.defineProperty(out, UNDECODABLE, { value: bad, enumerable: false });
  return out;
}

/** A preValidation hook: a query parameter `parseQuery` could not decode is a 422 naming it. */
export async function refuseUndecodableQuery(req: FastifyRequest): Promise<void> {
  const bad = (req.query as { [UNDECODABLE]?: { field: string; message: string }[] } | undefined)?.[UNDECODABLE];
  if (bad === undefined) return;
  const first = bad[0] as { field: string; message: string };
  throw new ApiError('VALIDATION_ERROR', `${first.field}: ${first.message}`, bad);
}
