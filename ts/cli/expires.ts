/** Milliseconds per unit of a `--expires` duration. */
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The latest instant a token may expire at: the last an ISO 8601 date-time of four-digit year names. */
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** An RFC 3339 date-time: a date, `T`, a time, and `Z` or an offset. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * The instant `--expires` names, as ISO 8601 UTC: a duration from now (`30m`, `12h`, `30d`; units
 * s, m, h, d, w) or an RFC 3339 date-time. An error message when it is neither or not in the future.
 */
export function parseExpires(text: string, now = Date.now()): { at: string } | { error: string } {
  // A duration back from now (`--expires=-5m`, as the refusal of `--expires -5m` says to give it)
  // is in the past, not malformed.
  if (/^-\d{1,9}[smhdw]$/.test(text)) return { error: `must be in the future, got ${JSON.stringify(text)}` };
  const duration = /^(\d{1,9})([smhdw])$/.exec(text);
  let at: number;
  if (duration !== null) at = now + Number(duration[1]) * (UNIT_MS[duration[2] ?? 's'] ?? 0);
  else if (RFC3339.test(text)) at = Date.parse(text);
  else return { error: `expected a duration (30m, 12h, 30d) or an RFC 3339 date-time, got ${JSON.stringify(text)}` };
  if (Number.isNaN(at)) return { error: `not a valid date-time: ${JSON.stringify(text)}` };
  if (at <= now) return { error: `must be in the future, got ${JSON.stringify(text)}` };
  // `999999999d` is a duration the pattern takes; its instant has no ISO 8601 form (years past 9999).
  if (at > LATEST) return { error: `is past ${new Date(LATEST).toISOString()}, got ${JSON.stringify(text)}` };
  return { at: new Date(at).toISOString() };
}
