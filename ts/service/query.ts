import type { z } from 'zod';

import type { ApiError } from '../protocol/errors.js';
import type { QueryReply } from '../protocol/replies-knowledge.js';
import { type Evidence, fuseSteps } from './fusion.js';
import { buildPack, ESTIMATOR, type PackOptions } from './pack.js';
import { mayCut, type Plan, plan } from './planner.js';

type Reply = Record<string, unknown>;
type Item = Record<string, unknown>;

/** Defaults of memory_query (docs/design/query.md). */
export const QUERY_DEFAULTS = {
  maxSteps: 4,
  timeoutMs: 5000,
  minEvidence: 2,
  k: 8,
  historyTargets: 5,
  historyEvents: 20,
};

/** What history may spend without a `tokenBudget`: 8,000 estimated tokens (32 KB of events). */
export const HISTORY_TOKENS = 8000;

/** What one query asks for, after validation. */
export interface QueryRequest {
  query: string;
  subqueries?: string[] | undefined;
  includeHistory?: boolean | undefined;
  maxSteps?: number | undefined;
  timeoutMs?: number | undefined;
  minEvidence?: number | undefined;
  /** Items per step: the default `minEvidence` never asks for more than one step can find. */
  k?: number | undefined;
  /** The steps' `as_of`, in ms: history is cut there too, so a read as of then shows nothing later. */
  asOfMs?: number | undefined;
  pack: PackOptions;
}

/** A history target reached by the evidence: a note (by its identity) or an entity (by name). */
export type HistoryTarget =
  | { kind: 'note'; key: string; visibility: string; taskId?: string }
  | { kind: 'entity'; subject: string };

/**
 * How the query reaches the store. Every function runs as the caller, through the same service
 * functions a single memory_context or memory_history call uses, so a query never sees more than
 * its caller could ask for one call at a time.
 */
export interface QueryDeps {
  /** One memory_context for a step's question. */
  context(question: string): Promise<Reply>;
  /** The stored entity names `query` holds, so the planner never splits inside one. */
  names?(query: string): Promise<string[]>;
  /** The events of one target. */
  history(target: HistoryTarget): Promise<Reply>;
  /** A timer that fires after `ms` unless cancelled (a fake in tests). */
  timer(ms: number): { fired: Promise<void>; cancel(): void };
}

/** One step as the reply reports it (the reply schema's type). */
type StepReport = z.infer<typeof QueryReply>['steps'][number];

const TIMEOUT: unique symbol = Symbol('timeout');

/**
 * sufficient: enough evidence, nothing dropped, and every step ran and was grounded; insufficient:
 * every part was asked and its step ran, and none found anything. Nothing found while a part was
 * not searched (a step timed out, skipped or failed, a part dropped beyond `maxSteps`) is
 * partial: an audit saw `insufficient` ("no step found evidence") for a query whose deadline
 * passed before any step ran, telling a caller memory holds nothing when nothing was searched.
 * A part dropped beyond `maxSteps` was never asked, and evidence the pack left out (its budget,
 * its item cap) never reaches the caller, so either makes the answer at most partial.
 * `found` counts the evidence the steps found, kept or not: a pack that keeps none of it leaves
 * the answer partial (a larger budget gets it), not insufficient (nothing stored answers).
 * `why` names every reason the verdict is not `sufficient` (null when it is), so a caller that
 * hedges knows on what: an audit saw `partial` with nothing to say it was `minEvidence`.
 */
function sufficiency(
  found: number,
  minEvidence: number,
  reports: StepReport[],
  dropped: number,
  omitted: number,
): { verdict: string; why: string | null } {
  const unsearched = dropped > 0 || reports.some((r) => r.state !== 'done');
  if (found === 0 && !unsearched) return { verdict: 'insufficient', why: 'no step found evidence' };
  const why: string[] = [];
  if (found === 0) {
    const ran = reports.some((r) => r.state === 'done');
    why.push(ran ? 'the steps that ran found no evidence' : 'no step finished its search');
  }
  if (dropped > 0) why.push(`${dropped} part(s) beyond maxSteps were not asked`);
  if (omitted > 0) why.push(`${omitted} evidence item(s) left out of the pack (tokenBudget/maxItems/reply bytes)`);
  for (const r of reports) {
    if (r.state !== 'done') why.push(`step ${r.step} ${r.state}`);
    else if (r.grounding !== 'grounded' && r.grounding !== 'grounded_by_meaning') {
      const uncovered =
        r.uncovered !== undefined && r.uncovered.length > 0 ? ` (uncovered: ${r.uncovered.join(', ')})` : '';
      why.push(`step ${r.step} ${r.grounding ?? 'could_not_judge'}${uncovered}`);
    }
  }
  if (found > 0 && found < minEvidence) why.push(`evidence ${found} < minEvidence ${minEvidence}`);
  return why.length === 0 ? { verdict: 'sufficient', why: null } : { verdict: 'partial', why: why.join('; ') };
}

/** The notes and entities the evidence reached, best first, without repeats, at most `limit`. */
export function historyTargets(evidence: Evidence[], limit: number): HistoryTarget[] {
  const out: HistoryTarget[] = [];
  const seen = new Set<string>();
  const add = (key: string, t: HistoryTarget) => {
    if (out.length >= limit || seen.has(key)) return;
    seen.add(key);
    out.push(t);
  };
  for (const ev of evidence) {
    const note = ev.note as { key?: unknown; visibility?: unknown; taskId?: unknown } | undefined;
    if (ev.kind === 'note' && typeof note?.key === 'string' && typeof note.visibility === 'string') {
      const t: HistoryTarget = { kind: 'note', key: note.key, visibility: note.visibility };
      if (typeof note.taskId === 'string') t.taskId = note.taskId;
      add(`note:${note.key}:${note.visibility}:${String(note.taskId ?? '')}`, t);
    }
    if (ev.kind === 'entity' && typeof ev.name === 'string')
      add(`entity:${ev.name}`, { kind: 'entity', subject: ev.name });
    if (ev.kind === 'fact') {
      for (const end of [ev.subject, ev.object]) {
        const name = (end as { name?: unknown } | undefined)?.name ?? end;
        if (typeof name === 'string') add(`entity:${name}`, { kind: 'entity', subject: name });
      }
    }
  }
  return out;
}

type HistoryEntry = { target: HistoryTarget; events: Item[]; nextCursor?: string | null; error?: object };

/** One target's events up to `as_of` (a failure is reported on the target, the others still count). */
async function readHistory(target: HistoryTarget, deps: QueryDeps, asOf: number | undefined): Promise<HistoryEntry> {
  try {
    const h = await deps.history(target);
    const all = Array.isArray(h.events) ? (h.events as Item[]) : [];
    const events = asOf === undefined ? all : all.filter((e) => typeof e.at === 'string' && Date.parse(e.at) <= asOf);
    // Events come oldest first: once one is past `as_of`, every later page is too.
    const nextCursor = events.length < all.length ? null : ((h.nextCursor as string | null | undefined) ?? null);
    return { target, events, nextCursor };
  } catch (err) {
    const e = err as ApiError;
    return { target, events: [], error: { code: e.code ?? 'INTERNAL', message: e.message } };
  }
}

/**
 * The history a reply carries within `limit` estimated tokens (`utf8_bytes_v1` of each event's
 * JSON): each target keeps its events, oldest first, while they fit; from the first that does not,
 * that target's events are left out whole (never cut), counted in `omittedEvents`, and its
 * `nextCursor` is null, since the page's cursor would skip them (memory_history on the target
 * reads them); a later target's may still fit. Found by an audit: a 1,000-token budget answered
 * 198 KB, 190 KB of it twenty 3 KB note versions, each with its before, after and patch.
 */
export function boundHistory(entries: HistoryEntry[], limit: number) {
  let bytes = 0;
  let omitted = 0;
  const history = entries.map((entry) => {
    const kept: Item[] = [];
    for (const event of entry.events) {
      const eventBytes = Buffer.byteLength(JSON.stringify(event), 'utf8');
      if (Math.ceil((bytes + eventBytes) / 4) > limit) break;
      bytes += eventBytes;
      kept.push(event);
    }
    const left = entry.events.length - kept.length;
    if (left === 0) return entry;
    omitted += left;
    return { ...entry, events: kept, nextCursor: null, omittedEvents: left };
  });
  return {
    history,
    budget: { estimator: ESTIMATOR, limit, used: Math.ceil(bytes / 4), omittedEvents: omitted },
  };
}

/**
 * Runs a query: plans it, runs the steps one after another until the deadline (a step still
 * running then is `timed_out` and the rest `skipped`: what finished is kept, so the degrade is
 * deterministic in which steps count), fuses the steps' items (RRF), packs them (what the pack
 * leaves out is only named in `omitted`), and optionally reads the history of the evidence
 * returned (up to `as_of`: an audit saw a query as of t1 show the events written after it). A
 * failing step is reported and the others still count; when every step fails, the first failure
 * is thrown.
 */
export async function runQuery(req: QueryRequest, deps: QueryDeps): Promise<Reply> {
  const maxSteps = req.maxSteps ?? QUERY_DEFAULTS.maxSteps;
  const timeoutMs = req.timeoutMs ?? QUERY_DEFAULTS.timeoutMs;
  // With `k: 1` a default of 2 could never be met by a one-step query, however well grounded.
  const minEvidence = req.minEvidence ?? Math.min(QUERY_DEFAULTS.minEvidence, req.k ?? QUERY_DEFAULTS.k);
  const explicit = req.subqueries !== undefined && req.subqueries.length > 0;
  // Stored names change a plan only where the planner may cut, kept or not (planner `mayCut`).
  const asksNames = !explicit && mayCut(req.query);
  const names = asksNames && deps.names !== undefined ? await deps.names(req.query) : [];
  const p: Plan = plan(req.query, req.subqueries, maxSteps, names);
  let timedOut = false;
  const clock = deps.timer(timeoutMs);
  const deadline = clock.fired.then((): typeof TIMEOUT => {
    timedOut = true;
    return TIMEOUT;
  });
  const reports: StepReport[] = [];
  const done: { step: number; items: Item[] }[] = [];
  let firstError: ApiError | undefined;
  for (const [i, question] of p.steps.entries()) {
    const step = i + 1;
    if (timedOut) {
      reports.push({ step, question, state: 'skipped' });
      continue;
    }
    const running = deps.context(question).then(
      (reply) => ({ reply }),
      (error: unknown) => ({ error }),
    );
    const outcome = await Promise.race([running, deadline]);
    if (outcome === TIMEOUT) {
      reports.push({ step, question, state: 'timed_out' });
      continue;
    }
    if ('error' in outcome) {
      const e = outcome.error as ApiError;
      firstError ??= e;
      reports.push({ step, question, state: 'failed', error: { code: e.code ?? 'INTERNAL', message: e.message } });
      continue;
    }
    const items = Array.isArray(outcome.reply.items) ? (outcome.reply.items as Item[]) : [];
    const grounding = outcome.reply.grounding as { verdict?: string; uncovered?: string[] } | undefined;
    const report: StepReport = { step, question, state: 'done', grounding: grounding?.verdict ?? 'could_not_judge' };
    if (report.grounding === 'related' && Array.isArray(grounding?.uncovered)) report.uncovered = grounding.uncovered;
    reports.push({ ...report, items: items.length });
    done.push({ step, items });
  }
  clock.cancel();
  if (done.length === 0 && firstError !== undefined && !timedOut) throw firstError;
  const found = fuseSteps(done);
  const fallbacks: Reply[] = [];
  if (timedOut) {
    fallbacks.push({
      reason: 'timeout',
      timeoutMs,
      completed: reports.filter((r) => r.state === 'done').map((r) => r.step),
      // The step in flight is neither completed nor skipped: its state, `timed_out`, says so.
      skipped: reports.filter((r) => r.state === 'skipped').map((r) => r.step),
    });
  }
  if (p.dropped.length > 0) fallbacks.push({ reason: 'max_steps', maxSteps, dropped: p.dropped });
  if (p.complexity === 'L3') fallbacks.push({ reason: 'unsupported_complexity', why: p.unsupported });
  const { items: packed, ...pack } = buildPack(found, req.pack);
  // The pack's budget and item cap bound the reply, not only `context`: evidence the pack left out
  // is named in `omitted` (rank, kind, id, why), never returned in full. What it kept is returned
  // once, in fused order, each with its `line` in `context` (`[n]`): a second list in pack order
  // doubled the reply.
  const lineOf = new Map<Item, number>(packed.map((item, i) => [item, i + 1]));
  const evidence = found.flatMap((ev) => {
    const line = lineOf.get(ev);
    return line === undefined ? [] : [{ ...ev, line }];
  });
  const judged = sufficiency(found.length, minEvidence, reports, p.dropped.length, pack.omitted_total);
  const reply: Reply = {
    plan: { source: p.source, complexity: p.complexity, steps: p.steps, dropped: p.dropped },
    complexity: p.complexity,
    steps: reports,
    evidence,
    sufficiency: judged.verdict,
    sufficiencyWhy: judged.why,
    minEvidence,
    fallback: fallbacks[0] ?? null,
    fallbacks,
    ...pack,
  };
  if (p.complexity === 'L3') reply.unsupported_complexity = p.unsupported;
  if (req.includeHistory === true && !timedOut) {
    // Of the evidence returned only: the history of what the pack left out would bring it back.
    const targets = historyTargets(evidence, QUERY_DEFAULTS.historyTargets);
    const read = await Promise.all(targets.map((target) => readHistory(target, deps, req.asOfMs)));
    const limit =
      req.pack.tokenBudget === undefined ? HISTORY_TOKENS : Math.max(0, req.pack.tokenBudget - pack.budget.used);
    const bounded = boundHistory(read, limit);
    reply.history = bounded.history;
    reply.historyBudget = bounded.budget;
  } else if (req.includeHistory === true) {
    reply.history = [];
  }
  return reply;
}
