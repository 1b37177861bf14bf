/**
 * The lists of what one write did, bounded as every other reply is (docs/api.md "Reply bounds").
 * Found by an audit: `memory_remember` of 1,000 passages whose mentions were absent listed 1,000
 * rejections (up to 1.7 KB each with a long key and mention: 1.6 MB), and `delete_user` listed
 * every scope of the user (a user may have thousands).
 */

type Reply = Record<string, unknown>;

/** How many entries each list keeps. */
export const LISTED = 100;

/** The JSON bytes `rejected` keeps, past which it ends early (at least one entry kept). */
export const REJECTED_BYTES = 16 * 1024;

/**
 * The `n` entries of `list` with the largest `size`, in `list`'s order (ties: the earlier). Both
 * scope lists (status's and delete_user's) keep those that hold the most, in name order.
 */
export function largestInOrder<T>(list: T[], n: number, size: (entry: T) => number): T[] {
  const kept = new Set(
    list
      .map((e, i) => ({ e, i, size: size(e) }))
      .sort((a, b) => b.size - a.size || a.i - b.i)
      .slice(0, n)
      .map((x) => x.e),
  );
  return list.filter((e) => kept.has(e));
}

const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

/** The first entries of `list` within `LISTED` and `maxBytes` of JSON (one kept whatever its size). */
function head<T>(list: T[], maxBytes = Number.POSITIVE_INFINITY): T[] {
  const kept: T[] = [];
  let bytes = 2;
  for (const entry of list.slice(0, LISTED)) {
    bytes += jsonBytes(entry) + (kept.length > 0 ? 1 : 0);
    if (kept.length > 0 && bytes > maxBytes) break;
    kept.push(entry);
  }
  return kept;
}

/**
 * memory_remember's `rejected` and `unlinked_passages` in the call's order, each within `LISTED`
 * entries (`rejected` also within `REJECTED_BYTES`), with `<list>_omitted` counting the rest. The
 * rest follow the last one listed, so sending the passages after it again lists them: one stored
 * already is not stored twice.
 */
export function boundRemember(reply: Reply): Reply {
  const out = { ...reply };
  const rejected = Array.isArray(reply.rejected) ? (reply.rejected as { passage?: unknown }[]) : [];
  const kept = head(rejected, REJECTED_BYTES);
  if (kept.length < rejected.length) {
    const omitted = rejected.length - kept.length;
    const last = Number(kept.at(-1)?.passage);
    out.rejected = kept;
    out.rejected_omitted = omitted;
    out.rejected_hint = `${kept.length} of ${rejected.length} rejected passages listed, in the call's order; the other ${omitted} come after passage ${last}: send the passages after it again to list them (one stored already is not stored twice)`;
  }
  const unlinked = Array.isArray(reply.unlinked_passages) ? (reply.unlinked_passages as unknown[]) : [];
  if (unlinked.length > LISTED) {
    out.unlinked_passages = unlinked.slice(0, LISTED);
    out.unlinked_passages_omitted = unlinked.length - LISTED;
  }
  return out;
}

type Counts = Record<string, number>;
type ScopeForgotten = { scope: string; forgotten: Counts };

const held = (s: ScopeForgotten) => Object.values(s.forgotten).reduce((n, c) => n + Number(c), 0);

/**
 * delete_user's `scopes` within `LISTED`: past it, those that held the most (in name order, as the
 * whole list is), with `scopes_omitted` counting the rest. `forgotten` sums every scope, listed or
 * not, so the counts stay exact.
 */
export function boundDeleteUser(reply: Reply): Reply {
  if (!Array.isArray(reply.scopes)) return reply;
  const scopes = reply.scopes as ScopeForgotten[];
  const forgotten: Counts = {};
  for (const s of scopes) {
    for (const [what, n] of Object.entries(s.forgotten)) forgotten[what] = (forgotten[what] ?? 0) + Number(n);
  }
  if (scopes.length <= LISTED) return { ...reply, forgotten };
  const omitted = scopes.length - LISTED;
  return {
    ...reply,
    forgotten,
    scopes: largestInOrder(scopes, LISTED, held),
    scopes_omitted: omitted,
    scopes_hint: `${LISTED} of ${scopes.length} forgotten scopes listed (those that held the most); \`forgotten\` counts all of them`,
  };
}
