import { RecallInput } from '../protocol/knowledge.js';
import { engineBody, type Principal, parseInput, readableScopes, type Service } from './context.js';
import { knowledge } from './engine.js';
import { resolveIdentity } from './identity.js';

type Reply = Record<string, unknown>;

/** How many passages the mention check reads: a hint, not an index; `more` says when it stopped. */
const MENTION_READ = 100;

/** Text as the mention check compares it: compatibility forms, case and runs of spaces folded. */
export function folded(s: string): string {
  return s.normalize('NFKC').toLocaleLowerCase('und').replace(/\s+/g, ' ').trim();
}

/**
 * The stored name an `answered` recall shows no fact for (an entity only passages name: a
 * `passages` mention, or one whose facts were forgotten or fall outside the read's time), else
 * undefined.
 */
function factlessName(reply: Reply): string | undefined {
  if (reply.state !== 'answered' || !Array.isArray(reply.facts) || reply.facts.length > 0) return undefined;
  const name = (reply.subject as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * memory_recall: everything about one entity, with citations and a `state`. Recall answers from
 * entities and facts only, and text sent as `content` creates neither, so a name that stored
 * text discusses can be `nothing_stored` (an audit: "Kenji Watanabe" after remembering a passage
 * about him). The state stays (recall never invents), but such a miss by `subject` gains
 * `text_mentions`: how many of the caller's passages name the subject word for word, found by
 * the engine's full-text channel (memory_context with no walk) and checked as a phrase, and a
 * pointer to memory_context, which answers from them. So does an `answered` recall showing no
 * fact, checked under the stored name: an entity that `passages` mentions has no fact, and
 * "answered" with `facts: []` read to a model as "nothing is known" (session 48's QA).
 */
export async function memoryRecall(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(RecallInput, raw);
  const id = resolveIdentity(p, input);
  const reply = await knowledge(svc.store, 'recall', id, { ...engineBody(input), ...readableScopes(p) });
  if (input.subject === undefined) return reply;
  const subject = reply.state === 'nothing_stored' ? input.subject : factlessName(reply);
  if (subject === undefined) return reply;
  const body = engineBody({ question: subject, hops: 0, k: MENTION_READ, compact: true, as_of: input.as_of });
  const found = await knowledge(svc.store, 'context', id, body);
  const items = Array.isArray(found.items) ? (found.items as Reply[]) : [];
  const name = folded(subject);
  const passages = items.filter(
    (i) => i.kind === 'passage' && typeof i.text === 'string' && folded(i.text).includes(name),
  );
  if (passages.length === 0) return reply;
  const more = items.length >= MENTION_READ;
  return {
    ...reply,
    text_mentions: {
      passages: passages.length,
      ...(more ? { more: true } : {}),
      hint:
        `No ${reply.state === 'answered' ? 'fact is shown' : 'entity or fact is stored'} for "${subject}", but ` +
        `${passages.length}${more ? ' or more' : ''} stored ` +
        'passage(s) name it: call memory_context with a question about it to answer from them, and cite them.',
    },
  };
}
