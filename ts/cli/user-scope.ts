import { Name256 } from '../protocol/fields.js';
import { nfc } from '../protocol/unicode.js';
import { usage } from './failure.js';

/**
 * `--user` and `--scope` as the node takes `user_id` and `scope`: checked by the same rule (else
 * VALIDATION_ERROR naming the flag, exit 2) and in NFC, so a name reaches the same user on the
 * store directly as through a node.
 */
export function userScope(user: string, scope: string): { user: string; scope: string } {
  for (const [flag, value] of [
    ['--user', user],
    ['--scope', scope],
  ] as const) {
    const r = Name256.safeParse(value);
    if (!r.success) throw usage(flag, r.error.issues[0]?.message ?? 'invalid');
  }
  return { user: nfc(user), scope: nfc(scope) };
}

/** Why `value` is no user or scope name (the rule `userScope` checks), or null when it is one. */
export function nameProblem(value: unknown): string | null {
  const r = Name256.safeParse(value);
  return r.success ? null : (r.error.issues[0]?.message ?? 'invalid');
}
