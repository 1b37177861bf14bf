import { EXPORT_DEFAULT_BYTES } from '../protocol/knowledge.js';
import { PARTS } from './rate-limit.js';

/**
 * What an export continuation page (`export` with a `cursor`) costs of the token's rate limit: a
 * sixteenth of a request for each 64 KiB its `maxBytes` lets it carry (default 64 KiB: a
 * sixteenth), at most one request (1 MiB and more). Found by an audit: paging a 100k-entity scope
 * at the default page size took 2,788 pages, and at 1,200 requests a minute a client doing so was
 * refused RATE_LIMITED after 1,200 of them, so a plain "export my memory" sat out minutes of 429s.
 * Default pages stay small (a model reads them); now they cost 1/16, so the 2,788 pages cost 175
 * requests. Charging by size keeps what a token can read a minute by export pages where it was
 * (pages under 1 MiB at most 1.2 GiB, e.g. 19,200 of 64 KiB; 4 MiB pages 4.8 GiB, as before):
 * a token may send more requests so, each bounded by its page. The first page (no cursor) costs a
 * whole request: it also counts the private notes withheld from the reader, reading every note of
 * the scope.
 */
const BYTES_PER_PART = 64 * 1024;

/** The parts of a request (`PARTS` in one) to give back once `verb` answered `input` (valid by then). */
export function exportPageRefund(verb: string, input: unknown): number {
  if (verb !== 'export' || typeof input !== 'object' || input === null) return 0;
  const { cursor, maxBytes } = input as { cursor?: unknown; maxBytes?: unknown };
  if (typeof cursor !== 'string') return 0;
  const bytes = typeof maxBytes === 'number' ? maxBytes : EXPORT_DEFAULT_BYTES;
  return PARTS - Math.min(PARTS, Math.ceil(bytes / BYTES_PER_PART));
}
