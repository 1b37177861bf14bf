import { live, type TokenInfo, Tokens } from '../auth/tokens.js';
import type { Store } from '../engine/store.js';
import { nfc } from '../protocol/unicode.js';
import type { Identity } from './identity.js';

/** Most known agent names a warning suggests. */
const MAX_NEAR = 5;
/** Furthest a suggested name may be from `to`, in edits (case aside). */
const MAX_EDITS = 2;

/** Something a reply tells the caller without refusing the request: what `field` sent, and why it may not do what was meant. */
export interface Warning {
  field: string;
  message: string;
  /** Known names close to what was sent, nearest first (at most 5). */
  near: string[];
}

/**
 * The warning for a handoff addressed `to` an agent no live token that may act for the caller's
 * `user` is bound to (one bound to that user, or to no user): the capsule is stored (a team may
 * make that token later), but until then nobody finds it among the handoffs addressed to them,
 * and a typo would go unnoticed (found by an audit). Only those tokens' agents are read or named:
 * another user's agents, and whether their tokens live, are that user's (DESIGN.md §1; an audit
 * found `near` naming them), and another tenant's likewise.
 */
export async function addresseeWarning(
  store: Store,
  id: Pick<Identity, 'tenant' | 'user'>,
  to: string,
): Promise<Warning | null> {
  const mayActFor = (r: TokenInfo) => r.user === undefined || nfc(r.user) === nfc(id.user);
  const known = new Set(
    (await new Tokens(store).list())
      .filter((r) => r.tenant === id.tenant && live(r) && mayActFor(r))
      .map((r) => r.agent),
  );
  if (known.has(to)) return null;
  const wanted = to.toLowerCase();
  const near = [...known]
    .map((name) => ({ name, edits: edits(wanted, name.toLowerCase()) }))
    .filter((c) => c.edits <= MAX_EDITS)
    .sort((a, b) => a.edits - b.edits || (a.name < b.name ? -1 : 1))
    .slice(0, MAX_NEAR)
    .map((c) => c.name);
  const guess = near.length === 0 ? '' : `; did you mean ${near.map((n) => JSON.stringify(n)).join(', ')}?`;
  const message =
    `no live token that may act for this user is bound to agent ${JSON.stringify(to)}: the handoff is stored, but no agent will find it ` +
    `among the handoffs addressed to it until a token names that agent${guess}`;
  return { field: 'to', message, near };
}

/** The Levenshtein distance between `a` and `b` (agent names: ASCII, at most 128 characters). */
function edits(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      const swap = a[i - 1] === b[j - 1] ? 0 : 1;
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + swap);
    }
    row = next;
  }
  return row[b.length] ?? 0;
}
