/** The reciprocal-rank fusion constant the engine uses too. */
export const RRF_K = 60;

type Item = Record<string, unknown>;

/**
 * The identity of a context item across steps, so one fact found by two steps is one piece of
 * evidence: a note or handoff by id, a fact by id, a passage by document and ordinal, an entity by id; an
 * item without an id falls back to its kind and text.
 */
export function evidenceKey(item: Item): string {
  const kind = String(item.kind ?? 'item');
  const note = item.note as { id?: unknown } | undefined;
  if (kind === 'note' && typeof note?.id === 'string') return `note:${note.id}`;
  const handoff = item.handoff as { id?: unknown } | undefined;
  if (kind === 'handoff' && typeof handoff?.id === 'string') return `handoff:${handoff.id}`;
  if (kind === 'passage' && typeof item.doc_id === 'string')
    return `passage:${item.doc_id}:${String(item.ordinal ?? '')}`;
  if (typeof item.id === 'string') return `${kind}:${item.id}`;
  return `${kind}:text:${String(item.text ?? '')}`;
}

/** One piece of fused evidence: the first copy of the item, with the steps and ranks that found it. */
export type Evidence = Item & { score: number; steps: number[]; stepRanks: Record<string, number> };

/**
 * Reciprocal-rank fusion of the items of several steps (step n's item at rank r adds
 * 1 / (60 + r)). Best first; ties keep the order of first appearance (step, then rank), so the
 * result depends only on the steps' replies.
 */
export function fuseSteps(steps: { step: number; items: Item[] }[]): Evidence[] {
  const byKey = new Map<string, { ev: Evidence; first: number }>();
  let seen = 0;
  for (const { step, items } of steps) {
    items.forEach((item, i) => {
      const key = evidenceKey(item);
      let entry = byKey.get(key);
      if (entry === undefined) {
        entry = { ev: { ...item, score: 0, steps: [], stepRanks: {} }, first: seen++ };
        byKey.set(key, entry);
      }
      if (!entry.ev.steps.includes(step)) {
        entry.ev.steps.push(step);
        entry.ev.stepRanks[String(step)] = i + 1;
        entry.ev.score += 1 / (RRF_K + i + 1);
      }
    });
  }
  return [...byKey.values()].sort((a, b) => b.ev.score - a.ev.score || a.first - b.first).map((e) => e.ev);
}
