import { folded } from './recall.js';

type Reply = Record<string, unknown>;

/** How many notes the check reads: a hint, not an index, as recall's `text_mentions`. */
const NOTES_READ = 100;

/**
 * The `kept` entry of a `forget {subject}` for the caller's notes that name the subject, if any.
 * Notes are the agents' structured memory, not facts about the entity, so forgetting a person
 * leaves them; but the reply said `kept: []`, and `memory_context` went on quoting a note about
 * the person (found in session 48's QA). `list` runs `note_list` with a query, as the caller.
 */
export async function notesNaming(
  name: string,
  list: (body: Reply) => Promise<Reply>,
): Promise<{ what: string; count: number; why: string } | undefined> {
  const listed = await list({ query: name, limit: NOTES_READ, offer: false });
  const found = Array.isArray(listed.notes) ? (listed.notes as { key?: unknown; value?: unknown }[]) : [];
  const want = folded(name);
  const count = found.filter((n) =>
    folded(`${String(n.key)} ${typeof n.value === 'string' ? n.value : JSON.stringify(n.value)}`).includes(want),
  ).length;
  if (count === 0) return undefined;
  return {
    what: 'notes',
    count,
    why:
      `notes naming "${name}" are not facts about it; memory_note_list with query "${name}" lists them, ` +
      'memory_forget {note: {key}} takes one',
  };
}
