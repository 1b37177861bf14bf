import { Name256 } from '../protocol/fields.js';

/** Why `--user`/`--scope` values cannot name a scope (the flag and the rule), or null when both can. */
export function userScopeProblem(user: string, scope: string): string | null {
  for (const [flag, value] of [
    ['--user', user],
    ['--scope', scope],
  ] as const) {
    const r = Name256.safeParse(value);
    if (!r.success) return `${flag}: ${r.error.issues[0]?.message ?? 'invalid'}`;
  }
  return null;
}
