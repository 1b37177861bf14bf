import { RRF_K } from './fusion.js';

type Item = Record<string, unknown>;
type Reply = Record<string, unknown>;

/** A capsule as `handoff_resume` answers it (DESIGN.md §2; `Handoff` in reply-parts.ts). */
interface Capsule {
  id: string;
  taskId: string;
  summary: string;
  status: string | null;
  from: string;
  to?: string;
  createdAt: string;
  expiresAt?: string;
  decisions: unknown[];
  nextSteps: unknown[];
  artifacts: unknown[];
  blockers: unknown[];
  superseded?: true;
}

/** A capsule a context may show, with how it was found: as the task's (`taskId`), or addressed to the caller. */
export interface FoundHandoff {
  capsule: Capsule;
  /** Channel → rank: `handoff_task` (the task's newest unexpired capsule), `handoff_addressed` (newest first). */
  ranks: Record<string, number>;
  /** The question's content words it does not cover, as the engine judged it; null: not judged. */
  uncovered?: string[] | null;
}

/** The most texts the engine judges beside its items (its `CONTEXT_JUDGE`): notes and capsules together. */
export const CONTEXT_JUDGE = 100;

/** How many capsules addressed to the caller a context reads: the newest, as `handoff_resume {}` lists them. */
export const ADDRESSED_READ = 5;

/** Reads `handoff_resume` as the caller, with the node's policy (memory.ts's `notesBody`). */
type Resume = (body: Reply) => Promise<Reply>;

/**
 * The capsules a context of the caller may show, read as `memory_handoff_resume` reads them (same
 * identity, so the same tenant, user and scope, task visibility and expiry): with `taskId`, that
 * task's newest unexpired capsule; and the newest `ADDRESSED_READ` unexpired capsules addressed
 * to the caller, less those a newer capsule of their task superseded (stale: resume gives the
 * newer one to whoever names the task). With `asOfMs`, a capsule created after it is left out (a
 * read of what was known then; capsules have no versions, so an older capsule it replaced is not
 * brought back). At most `room` capsules (the engine judges at most 100 texts beside its items,
 * two a capsule).
 */
export async function handoffsFor(
  resume: Resume,
  taskId: string | undefined,
  asOfMs: number | undefined,
  room: number,
): Promise<FoundHandoff[]> {
  if (room <= 0) return [];
  // No scope to name: a context ranks what is here, so the engine's search of the caller's other
  // scopes for an empty answer (`elsewhere`) is skipped (an empty `readableScopes` admits none).
  const here = { readableScopes: [] };
  const found: FoundHandoff[] = [];
  if (taskId !== undefined) {
    const r = await resume({ taskId, ...here });
    if (r.state === 'resumed' && r.handoff !== undefined) {
      found.push({ capsule: r.handoff as Capsule, ranks: { handoff_task: 1 } });
    }
  }
  const listed = await resume({ limit: ADDRESSED_READ, ...here });
  const addressed = Array.isArray(listed.handoffs) ? (listed.handoffs as Capsule[]) : [];
  addressed
    .filter((c) => c.superseded !== true)
    .forEach((c, i) => {
      const same = found.find((f) => f.capsule.id === c.id);
      if (same !== undefined) same.ranks.handoff_addressed = i + 1;
      else found.push({ capsule: c, ranks: { handoff_addressed: i + 1 } });
    });
  const known = found.filter((f) => asOfMs === undefined || Date.parse(f.capsule.createdAt) <= asOfMs);
  return known.slice(0, room);
}

/** One list item's text: a string as it is, anything else as JSON. */
const itemText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A sentence: `text`, ended with a full stop unless it ends a sentence already. */
const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

/** The capsule's sections with content, each a label and its items. */
function sections(c: Capsule): [string, unknown[]][] {
  const all: [string, unknown[]][] = [
    ['Decisions', c.decisions],
    ['Next steps', c.nextSteps],
    ['Blockers', c.blockers],
    ['Artifacts', c.artifacts],
  ];
  return all.filter(([, items]) => Array.isArray(items) && items.length > 0);
}

/**
 * A capsule as a context item reads it: its status, summary and each non-empty section as a
 * sentence (`Next steps: rotate the key; update the docs.`). Who wrote it, on which task and when
 * is its citation's.
 */
export function handoffText(c: Capsule): string {
  const parts = c.status === null || c.status === '' ? [] : [sentence(`Status: ${c.status}`)];
  parts.push(sentence(c.summary));
  for (const [label, items] of sections(c)) parts.push(sentence(`${label}: ${items.map(itemText).join('; ')}`));
  return parts.join(' ');
}

/**
 * The words each section answers, whatever its items say: "what is left on AUTH-12" asks for the
 * next steps, "what did we decide" for the decisions, "what blocks it" for the blockers. Only a
 * section that holds items lends its words.
 */
const SECTION_WORDS: Record<string, string> = {
  Decisions: 'decisions decided',
  'Next steps': 'next steps left remaining',
  Blockers: 'blockers blocked',
  Artifacts: 'artifacts',
};

/** The lead every judged text of a capsule opens with: `handoff`, its task id (kept whole, as a task note's is) and its author. */
const ownLead = (c: Capsule) => ['handoff', c.taskId.replace(/:\s/g, ' '), c.from];

/** Whether the caller named the capsule's task (it was found as the task's), not only received it. */
const byTask = (h: FoundHandoff) => h.ranks.handoff_task !== undefined;

/**
 * A capsule's texts as the engine judges them against the question. First what it covers: its
 * lead (`ownLead`, `status` when it has one, and the words of its non-empty sections) before
 * `handoffText`, the lead's words counting in every sentence as a note key's do. Then, for a
 * capsule only addressed to the caller, what it says itself: the same without the section words,
 * by which it is judged to match at all (`matchingHandoffs`). Judging costs about 40 ns a byte
 * (20 texts of 1 KB added 0.5–0.85 ms to a context), so the task's capsule, matched by its
 * first text, is not judged twice.
 */
export function handoffJudgedTexts(h: FoundHandoff): string[] {
  const c = h.capsule;
  const lead = ownLead(c);
  if (c.status !== null && c.status !== '') lead.push('status');
  for (const [label] of sections(c)) lead.push(SECTION_WORDS[label] ?? label.toLowerCase());
  const text = handoffText(c);
  const covers = `${lead.join(' ')}: ${text}`;
  return byTask(h) ? [covers] : [covers, `${ownLead(c).join(' ')}: ${text}`];
}

/**
 * A capsule as a context item: `kind: "handoff"`, its text, its channels and ranks with their
 * reciprocal-rank score, a citation asserted by the agent that handed off (no document, no span),
 * the engine's `uncovered` words and the capsule's identity.
 */
export function handoffItem(h: FoundHandoff): Item {
  const c = h.capsule;
  const channels = Object.keys(h.ranks);
  return {
    kind: 'handoff',
    text: handoffText(c),
    score: Object.values(h.ranks).reduce((s, r) => s + 1 / (RRF_K + r), 0),
    channels,
    ranks: h.ranks,
    citation: {
      source: { kind: 'asserted', doc_id: null, name: `handoff on ${c.taskId} by ${c.from}`, ingested_at: c.createdAt },
      span: null,
    },
    seed: null,
    ...(h.uncovered === undefined || h.uncovered === null ? {} : { uncovered: h.uncovered }),
    handoff: {
      id: c.id,
      taskId: c.taskId,
      agent: c.from,
      ...(c.to === undefined ? {} : { to: c.to }),
      status: c.status,
      createdAt: c.createdAt,
      ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }),
    },
  };
}

/**
 * The capsules that match the question, each with the words it leaves uncovered: those that cover
 * at least one of the question's content words (`asked`). The task's capsule, the caller having
 * named its task, is judged with its section words ("what did we decide?" with `taskId` asks for
 * its decisions); a capsule only addressed to the caller by its own words (`handoffJudgedTexts`'
 * second text), since the section words alone would make every capsule with next steps match
 * "what is left on the billing cutover?" by `left` (found by its test). A capsule is shown because
 * it answers, not because it exists: with no content word to judge by, none is. `judged` holds
 * each capsule's `handoffJudgedTexts`, in order.
 */
export function matchingHandoffs(found: FoundHandoff[], judged: (string[] | null)[], asked: string[]): FoundHandoff[] {
  const out: FoundHandoff[] = [];
  let at = 0;
  for (const h of found) {
    const covers = judged[at] ?? null;
    const own = byTask(h) ? covers : (judged[at + 1] ?? null);
    at += byTask(h) ? 1 : 2;
    if (covers !== null && own !== null && asked.length > 0 && own.length < asked.length) {
      out.push({ ...h, uncovered: covers });
    }
  }
  return out;
}
