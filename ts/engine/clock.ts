let latest = 0;

/**
 * The time a write is stamped with, in milliseconds since the Unix epoch: the wall clock, never
 * earlier than a time this process has handed out before. A clock stepped back (a VM restored, a
 * laptop whose clock NTP corrects, WSL after sleep) would otherwise date a later write before an
 * earlier one: `handoff_resume` returned the older capsule as the newest, a note's `updatedAt`
 * fell before its `createdAt`, and `as_of` reads saw versions out of order. While the clock is
 * behind, writes share the latest time handed out, and ids (commit order) order them.
 */
export function writeTime(): number {
  const now = Date.now();
  if (now > latest) latest = now;
  return latest;
}
