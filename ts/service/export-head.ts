/**
 * What makes a body an export file: at least one line that is not blank, and the first such line
 * a record, a JSON object with a `kind` (an export file starts with its header record). Judged
 * before anything of the body is stored, so a body that is not an export file is refused whole
 * instead of answered as an import of nothing (found by an audit: the admin import route answered
 * 200 with zero counts to an empty body, to `{}` and to `[]`). An export of an empty scope is its
 * header alone, and imports as before. What a later line holds is the engine's to judge, a line at
 * a time (`skipped`).
 */

/** A first line longer than this is judged by its first character, not parsed here as well. */
const PARSED_HEAD = 16 * 1024 * 1024;

/**
 * The first line of `bytes` that is not blank (as `String.trim` reads blank): its index from 0, its
 * text (only its head when the line is longer than `PARSED_HEAD`: `cut`), and whether a line end
 * follows it in `bytes` (`ended`: else it may go on past them).
 */
export function firstLine(bytes: Buffer): { index: number; text: string; cut: boolean; ended: boolean } | null {
  let at = 0;
  for (let index = 0; at < bytes.length; index++) {
    const nl = bytes.indexOf(0x0a, at);
    const end = nl === -1 ? bytes.length : nl;
    const cut = end - at > PARSED_HEAD;
    const text = bytes.toString('utf8', at, cut ? at + PARSED_HEAD : end);
    if (text.trim() !== '') return { index, text, cut, ended: nl !== -1 };
    at = end + 1;
  }
  return null;
}

/**
 * Why `text`, the first line that is not blank, is not an export record; null when it is one. A
 * line `cut` to its head is left to the engine when it opens as an object.
 */
export function notARecord(text: string, cut = false): string | null {
  if (cut) return text.trimStart().startsWith('{') ? null : 'is not a JSON object';
  let value: unknown;
  try {
    // A byte order mark an editor saved is left to the engine, as before (it skips that line).
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return 'is not JSON';
  }
  if (Array.isArray(value)) return 'is a JSON array (send the records one a line, not as an array)';
  if (value === null || typeof value !== 'object') return `is ${value === null ? 'null' : `a JSON ${typeof value}`}`;
  const o = value as Record<string, unknown>;
  if (typeof o.kind === 'string') return null;
  if (Array.isArray(o.records)) return 'is a memory_export reply (`{records, next}`): write its records one a line';
  return 'is a JSON object without a `kind`';
}

/** Why the line `head` (`firstLine` of a piece whose first line is `firstIndex`) is not a record, naming it from 1. */
export function headProblem(head: NonNullable<ReturnType<typeof firstLine>>, firstIndex = 0): string | null {
  const why = notARecord(head.text, head.cut);
  return why === null ? null : `line ${firstIndex + head.index + 1} ${why}`;
}

/** The sentence after a refusal's reason: what an export file holds. */
export const EXPORT_FILE =
  'an export file holds one JSON record a line (kind header, entity, fact, document, note or handoff), its header first';
