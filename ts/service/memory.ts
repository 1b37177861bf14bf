import type { z } from 'zod';

import { Tokens } from '../auth/tokens.js';
import type { KnowledgeVerb } from '../engine/knowledge.js';
import type { NotesVerb } from '../engine/notes.js';
import { ApiError } from '../protocol/errors.js';
import { isoToMs } from '../protocol/fields.js';
import {
  AuditInput,
  ContextInput,
  DeleteUserInput,
  EXPORT_DEFAULT_BYTES,
  ExportInput,
  FORGET_FORMS,
  ForgetInput,
  formsIssue,
  ImportInput,
  RelateInput,
  RememberInput,
  StatusInput,
} from '../protocol/knowledge.js';
import {
  HandoffCreateInput,
  HandoffResumeInput,
  HistoryInput,
  NoteListInput,
  NoteWriteInput,
} from '../protocol/notes.js';
import { QueryInput } from '../protocol/query.js';
import { engineBody, type Principal, parseInput, readableScopes, type Service } from './context.js';
import { CONTEXT_JUDGE, handoffItem, handoffJudgedTexts, handoffsFor, matchingHandoffs } from './context-handoffs.js';
import { fusedScore, judgedText, type ListedNote, mergeNotes } from './context-notes.js';
import { memoryDocument } from './document.js';
import { knowledge, notes } from './engine.js';
import { notesNaming } from './forget-notes.js';
import { addresseeWarning } from './handoff-addressee.js';
import { type Identity, preauthorize, refuseRole, resolveIdentity } from './identity.js';
import { boundItems, buildPack, type Grounding, packGrounding } from './pack.js';
import { type HistoryTarget, runQuery } from './query.js';
import { memoryRecall } from './recall.js';
import { boundDeleteUser, boundRemember, largestInOrder } from './reply-lists.js';
import { chargeUser } from './user-share.js';

type Reply = Record<string, unknown>;

type Identified = { user_id?: string | undefined; scope?: string | undefined };
type ServiceFn = (svc: Service, p: Principal, raw: unknown) => Promise<Reply>;

function identify<T extends Identified>(p: Principal, input: T) {
  return resolveIdentity(p, input);
}

/** A knowledge verb served as sent: the input validated, its identity resolved, the rest passed on. */
function knowledgeVerb<S extends z.ZodType<Identified>>(verb: KnowledgeVerb, schema: S): ServiceFn {
  return (svc, p, raw) => {
    const input = parseInput(schema, raw);
    return knowledge(svc.store, verb, identify(p, input), engineBody(input));
  };
}

/** A notes-engine verb served as sent, with the node's private-notes policy added. */
function notesVerb<S extends z.ZodType<Identified>>(verb: NotesVerb, schema: S): ServiceFn {
  return (svc, p, raw) => {
    const input = parseInput(schema, raw);
    return notes(svc.store, verb, identify(p, input), notesBody(svc, input));
  };
}

/**
 * memory_status: node health, profile and capabilities, the caller's scopes with counts, and with
 * an explicit `scope` that scope's ontology (from the engine's `status`).
 */
export async function memoryStatus(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(StatusInput, raw);
  const id = identify(p, input);
  const engine = await knowledge(svc.store, 'status', id, engineBody(input));
  const explicit = input.scope !== undefined || p.headerScope !== undefined;
  const { ontology, ...rest } = engine;
  // A token limited to scopes learns nothing about the others, not even their names or counts.
  const allowed = p.token.scopes;
  if (allowed !== undefined && Array.isArray(rest.scopes)) {
    rest.scopes = (rest.scopes as { scope?: unknown }[]).filter((s) => allowed.includes(String(s.scope)));
  }
  if (Array.isArray(rest.scopes)) Object.assign(rest, listedScopes(rest.scopes as ScopeCounts[]));
  const health = svc.store.health();
  return {
    node: {
      status: health.writes === 'ok' && health.damaged === undefined ? 'ok' : 'degraded',
      version: svc.node.version,
      profile: svc.node.profile,
      uptime_s: Math.round((Date.now() - svc.node.startedAt) / 1000),
      ...(health.writes === 'ok' ? {} : { writes: { state: 'stopped', reason: health.reason, since: health.since } }),
      ...(health.damaged === undefined ? {} : { damaged: health.damaged }),
    },
    capabilities: {
      channels: ['graph', 'relation', 'mentions', 'full_text', 'meaning'],
      meaning: 'not_armed',
      embedding: { state: 'not_armed', done: 0, pending: 0 },
      budgets: {
        context: { k_max: 100, k_default: 8, hops_max: 3, hops_default: 2, estimator: 'utf8_bytes_v1' },
        remember: {
          entities: 1000,
          relations: 5000,
          text_bytes: 1048576,
          passages: 1000,
          passage_bytes: 65536,
          name_bytes: 1024,
        },
        export_page_max: 5000,
      },
    },
    identity: { user: id.user, scope: id.scope, agent: id.agent },
    ...rest,
    ...(explicit ? { ontology } : {}),
  };
}

/** One scope's counts in memory_status. */
type ScopeCounts = Record<string, unknown> & { scope: string };

/**
 * How many scopes memory_status lists. Found by an audit: a user of 2,000 scopes got a 164 KB
 * status; a model reads a summary, and `memory_status {scope}` counts any one scope.
 */
export const SCOPES_LISTED = 100;

/** Everything a scope holds, to rank which scopes a capped list keeps. */
const held = (s: ScopeCounts) =>
  ['entities', 'relations', 'documents', 'notes', 'handoffs'].reduce((n, f) => n + Number(s[f] ?? 0), 0);

/**
 * `scopes` within `SCOPES_LISTED`: past it, the scopes that hold the most (in name order, as the
 * whole list is), with `scopes_omitted` counting the rest and `scopes_hint` saying how to read one.
 */
function listedScopes(scopes: ScopeCounts[]): Record<string, unknown> {
  if (scopes.length <= SCOPES_LISTED) return { scopes };
  const omitted = scopes.length - SCOPES_LISTED;
  return {
    scopes: largestInOrder(scopes, SCOPES_LISTED, held),
    scopes_omitted: omitted,
    scopes_hint: `${SCOPES_LISTED} of ${scopes.length} scopes listed (those holding the most); ${omitted} left out: memory_status with \`scope\` counts any one`,
  };
}

const rememberVerb = knowledgeVerb('remember', RememberInput);

/** memory_remember: stores text and/or facts in the caller's scope; its lists bounded (`boundRemember`). */
export const memoryRemember: ServiceFn = async (svc, p, raw) => boundRemember(await rememberVerb(svc, p, raw));

/** memory_relate: one typed edge; `replaces` ends the subject's other edges of that type. */
export const memoryRelate = knowledgeVerb('relate', RelateInput);

/**
 * memory_context: ranked, cited items with a grounding verdict. The caller's visible notes that
 * match the question (the notes engine's hybrid query, same identity) compete with the knowledge
 * items for the `k` places. With `tokenBudget`, `maxItems` or `purpose` the items are also packed
 * into `context` text within the budget. Either way `items` stay within `ITEMS_BYTES` of JSON.
 */
export async function memoryContext(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  return contextReply(svc, p, raw, true);
}

/**
 * memory_context's reply; its items bounded to `ITEMS_BYTES` when `bound` (memory_query's steps
 * read them all, and bound what they fuse).
 */
async function contextReply(svc: Service, p: Principal, raw: unknown, bound = false): Promise<Reply> {
  const input = parseInput(ContextInput, raw);
  const { tokenBudget, maxItems, purpose, includePrivate, taskId, ...rest } = input;
  const id = identify(p, rest);
  const k = rest.k ?? 8;
  // `offer: false`: an empty list here only ranks nothing, it names no notes meant.
  const noteQuery: Record<string, unknown> = { query: rest.question, limit: k, offer: false };
  if (rest.as_of !== undefined) noteQuery.as_of = rest.as_of;
  // A note has no valid time: what held at `valid_at` is the version current then, as text dated
  // after it is left out (found by an audit: current notes answered "as of Nov 10").
  else if (rest.valid_at !== undefined && isoToMs(rest.valid_at) < Date.now()) noteQuery.as_of = rest.valid_at;
  if (includePrivate !== undefined) noteQuery.includePrivate = includePrivate;
  // The task's notes compete beside the caller's others: `viewTaskId` widens what is visible,
  // where note_list's `taskId` would filter to that task alone.
  if (taskId !== undefined) noteQuery.viewTaskId = taskId;
  const listed = await notes(svc.store, 'note_list', id, notesBody(svc, noteQuery));
  const found = Array.isArray(listed.notes) ? (listed.notes as ListedNote[]) : [];
  // The task's newest capsule and those addressed to the caller, read as handoff_resume reads
  // them; judged beside the notes, they compete as notes do when they cover the question.
  const asOfMs = typeof noteQuery.as_of === 'string' ? isoToMs(noteQuery.as_of) : undefined;
  const resume = (body: Reply) => notes(svc.store, 'handoff_resume', id, notesBody(svc, body));
  const candidates = await handoffsFor(resume, taskId, asOfMs, Math.floor((CONTEXT_JUDGE - found.length) / 2));
  // The engine judges the notes beside its items (`judge` → `judged`): a note the caller sees is
  // stored memory, cited as asserted like a fact an agent related, and grounds an answer as one
  // does. Left out of judging (before, found by an audit), a note that answered was reported
  // `related`, its own words listed as unsupported.
  const engineInput: Record<string, unknown> = { ...engineBody(rest), ...readableScopes(p) };
  const judge = [...found.map(judgedText), ...candidates.flatMap(handoffJudgedTexts)];
  if (judge.length > 0) engineInput.judge = judge;
  const reply = await knowledge(svc.store, 'context', id, engineInput);
  const judged = Array.isArray(reply.judged) ? (reply.judged as (string[] | null)[]) : [];
  delete reply.judged;
  // The question's content words: what a verdict over kept items names uncovered when none is cited.
  const asked = Array.isArray(reply.question_words) ? (reply.question_words as string[]) : [];
  delete reply.question_words;
  const handoffs = matchingHandoffs(candidates, judged.slice(found.length), asked).map(handoffItem);
  if (found.length > 0 || handoffs.length > 0) {
    const knowledgeItems = Array.isArray(reply.items) ? (reply.items as Reply[]) : [];
    const judgedNotes = found.map((n, i) => ({ ...n, uncovered: judged[i] ?? undefined }));
    reply.items = mergeNotes(knowledgeItems, judgedNotes, k, handoffs);
    if (reply.state === 'nothing_stored') reply.state = 'answered';
    // Notes or handoffs answer here: other scopes' knowledge (`elsewhere`) is no longer what to try next.
    delete reply.elsewhere;
    const grounding = reply.grounding as { verdict?: unknown } | undefined;
    if (grounding?.verdict === 'nothing_stored') grounding.verdict = 'uncited';
    // Judged over knowledge items and notes alike; notes may also have taken the places of the
    // knowledge items that grounded the answer.
    reply.grounding = packGrounding(reply.grounding as Grounding, reply.items as Reply[], asked);
  }
  if (reply.state === 'nothing_stored' && taskId === undefined && noteQuery.as_of === undefined) {
    const taskNotes = await taskNotesMatching(svc, id, rest.question);
    if (taskNotes !== undefined) reply.task_notes = taskNotes;
  }
  if (tokenBudget === undefined && maxItems === undefined && purpose === undefined) {
    if (!bound || !Array.isArray(reply.items)) return reply;
    // No pack: the items still stay within `ITEMS_BYTES`, the verdict judged over those kept.
    const bounded = boundItems(reply.items as Reply[]);
    if (bounded.omitted === undefined) return reply;
    return { ...reply, ...bounded, grounding: packGrounding(reply.grounding as Grounding, bounded.items, asked) };
  }
  const items = Array.isArray(reply.items) ? (reply.items as Reply[]) : [];
  const pack = buildPack(items, { tokenBudget, maxItems, purpose }, fusedScore);
  // The verdict speaks of what the caller gets: an item left out of the pack grounds nothing.
  const grounding = packGrounding(reply.grounding as Grounding, pack.items, asked);
  return { ...reply, ...pack, grounding };
}

/**
 * With nothing stored that answers `question`: the caller's task notes it matches, which a read
 * without their `taskId` does not see. Found by a review: agent B asked memory_context "what is
 * the plan step" and was told `nothing_stored` though its user's task note `task.plan` matched;
 * memory_note_list already names such notes (its `did_you_mean`), memory_context said nothing.
 */
async function taskNotesMatching(svc: Service, id: Identity, question: string): Promise<Reply | undefined> {
  const listed = await notes(svc.store, 'note_list', id, notesBody(svc, { query: question, limit: 1 }));
  const meant = Array.isArray(listed.did_you_mean) ? listed.did_you_mean : [];
  if (meant.length === 0) return undefined;
  return {
    notes: meant,
    hint: 'Task notes you may read match the question; send one of their taskId to memory_context to answer from them',
  };
}

/**
 * memory_query: a deterministic plan of memory_context steps run as the caller, under `maxSteps`
 * and `timeoutMs`, their items fused into evidence and packed, with a sufficiency verdict and the
 * fallback taken (docs/design/query.md).
 */
export async function memoryQuery(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(QueryInput, raw);
  identify(p, input); // refuses a forbidden user or scope before any step runs
  const { user_id, scope, hops, k, as_of, valid_at, compact, includePrivate, taskId } = input;
  const identityFields = { ...(user_id === undefined ? {} : { user_id }), ...(scope === undefined ? {} : { scope }) };
  // `compact` goes to every step: its citations lose the quoted text the items and `context` carry.
  const stepBody = { ...identityFields, hops, k, as_of, valid_at, compact, includePrivate, taskId };
  return runQuery(
    {
      query: input.query,
      subqueries: input.subqueries,
      includeHistory: input.includeHistory,
      maxSteps: input.maxSteps,
      timeoutMs: input.timeoutMs,
      minEvidence: input.minEvidence,
      k,
      asOfMs: as_of === undefined ? undefined : isoToMs(as_of),
      pack: { tokenBudget: input.tokenBudget, maxItems: input.maxItems, purpose: input.purpose },
    },
    {
      context: (question) => contextReply(svc, p, { ...stepBody, question }),
      names: async (question) => {
        // The names the engine finds whole in the query, as the query writes them: exact and case
        // seeds, and a word of a longer name ("billing" of "billing service"), which a later part's
        // pronoun stands for as well (found in QA: "Who owns billing and what does it depend on?"
        // ran "what does it depend on", which any stored dependency grounded).
        const body = engineBody({ question, hops: 0, k: 1, as_of });
        const reply = await knowledge(svc.store, 'context', identify(p, identityFields), body);
        const seeds = ((reply.seeding as { seeds?: unknown } | undefined)?.seeds ?? []) as {
          matched?: unknown;
          by?: unknown;
        }[];
        return seeds
          .filter(
            (s) => (s.matched === 'exact' || s.matched === 'case' || s.matched === 'word') && typeof s.by === 'string',
          )
          .map((s) => s.by as string);
      },
      history: (target: HistoryTarget) => {
        const { kind: _kind, ...which } = target;
        return memoryHistory(svc, p, { ...identityFields, ...which, limit: 20, includePrivate, compact });
      },
      timer: (ms) => {
        let handle: NodeJS.Timeout | undefined;
        const fired = new Promise<void>((resolve) => {
          handle = setTimeout(resolve, ms);
        });
        return { fired, cancel: () => clearTimeout(handle) };
      },
    },
  );
}

/**
 * Refuses a `fact` spelled with remember's relation ends (`source`/`target`), naming the form
 * forget and history take. Found by an audit: zod's closest shape was `{id}`, so the model was
 * told `fact.id` was missing and `type` unknown, and never that `{from, to, type}` would work.
 */
function refuseRememberEnds(raw: unknown): void {
  const fact = (raw as { fact?: unknown } | null | undefined)?.fact;
  if (typeof fact !== 'object' || fact === null || Array.isArray(fact)) return;
  if (!('source' in fact) && !('target' in fact)) return;
  const message =
    'a fact is named here as {from, to, type} (or {id}): source/target are memory_remember’s spelling of the ends';
  throw new ApiError('VALIDATION_ERROR', `fact: ${message}`, [{ field: 'fact', message }]);
}

/**
 * Refuses a body that sends more than one form of forget, whatever their values. The schema says
 * so only once every field is well typed: `{subject, fact: 5}` was told `fact` must be an object,
 * and a model that fixed that had still sent two forms, and was refused again for that.
 */
function refuseTwoForms(raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) return;
  const given = FORGET_FORMS.filter((f) => (raw as Record<string, unknown>)[f] !== undefined);
  if (given.length < 2) return;
  const { field, message } = formsIssue(given);
  throw new ApiError('VALIDATION_ERROR', `${field}: ${message}`, [{ field, message }]);
}

/** memory_forget: exactly one form; notes go to the notes engine, the rest to knowledge. */
export async function memoryForget(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  refuseTwoForms(raw);
  refuseRememberEnds(raw);
  const input = parseInput(ForgetInput, raw);
  const id = identify(p, input);
  if (input.note !== undefined) {
    return notes(svc.store, 'note_forget', id, notesBody(svc, input.note));
  }
  if (input.handoff !== undefined) {
    return notes(svc.store, 'handoff_forget', id, notesBody(svc, input.handoff));
  }
  const reply = await knowledge(svc.store, 'forget', id, engineBody(input));
  if (input.subject === undefined || reply.state !== 'forgotten') return reply;
  const kept = await notesNaming(input.subject, (body) => notes(svc.store, 'note_list', id, notesBody(svc, body)));
  if (kept === undefined) return reply;
  return { ...reply, kept: [...(Array.isArray(reply.kept) ? reply.kept : []), kept] };
}

/**
 * memory_export: one page of the caller's scope; `next` is the cursor of the following page. The
 * node's private-notes policy goes with it: private notes leave only when it allows them and the
 * caller asks (`includePrivate`). Agent-visibility notes leave only with their own agent's token,
 * or an admin's.
 */
export async function memoryExport(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(ExportInput, raw);
  return knowledge(svc.store, 'export', identify(p, input), {
    ...engineBody(input),
    maxBytes: input.maxBytes ?? EXPORT_DEFAULT_BYTES,
    allowPrivate: svc.node.allowPrivate,
    allAgents: p.token.role === 'admin',
  });
}

/**
 * memory_import: records of an export page into the caller's scope. An agent's agent-visibility
 * notes are its own: only an admin token imports (or exports) those of other agents.
 */
export async function memoryImport(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(ImportInput, raw);
  return knowledge(svc.store, 'import', identify(p, input), {
    ...engineBody(input),
    allAgents: p.token.role === 'admin',
  });
}

/**
 * delete_user: every scope of the caller's user, then every token bound to that user revoked
 * (`tokens_revoked` counts them), the caller's own too; the list of scopes bounded
 * (`boundDeleteUser`). The tokens go after the erasure, so one refused (nothing stored: 404)
 * changes nothing; run again, it revokes any bound token made since.
 */
export async function deleteUser(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  // Judged before `confirm`: a token limited to scopes may never call this verb, whatever it sends.
  if (p.token.scopes !== undefined) {
    throw new ApiError('FORBIDDEN', 'delete_user erases every scope; this token is limited to some', [
      { field: 'scope', message: 'this token is limited to some scopes' },
    ]);
  }
  const input = parseInput(DeleteUserInput, raw);
  const { confirm: _confirm, ...rest } = input;
  const id = identify(p, rest);
  const erased = await knowledge(svc.store, 'delete_user', id, engineBody(rest));
  const revoked = await new Tokens(svc.store).revokeUser(id.tenant, id.user);
  return boundDeleteUser({ ...erased, tokens_revoked: revoked });
}

/** audit: the calling agent's own events, paged (served by the notes engine). */
export const audit = notesVerb('audit', AuditInput);

/** The notes engine's body: the request without identity, plus the node's private-notes policy. */
function notesBody(svc: Service, input: object): Record<string, unknown> {
  return { ...engineBody(input), allowPrivate: svc.node.allowPrivate };
}

/** memory_note_write: one note version (CAS with `expectedVersion`, retries with `idempotencyKey`). */
export const memoryNoteWrite = notesVerb('note_write', NoteWriteInput);

/**
 * memory_note_list: the caller's visible notes, by filters or query, paged by a bound cursor. An
 * empty first page names the caller's other scopes holding notes it asked for (`elsewhere`): of a
 * token limited to scopes, only those (`readableScopes`; the engine reads only the caller's
 * tenant and user).
 */
export const memoryNoteList: ServiceFn = (svc, p, raw) => {
  const input = parseInput(NoteListInput, raw);
  return notes(svc.store, 'note_list', identify(p, input), { ...notesBody(svc, input), ...readableScopes(p) });
};

/**
 * memory_history: the events of one note, entity or fact. A note missing here is NOT_FOUND
 * naming, as `elsewhere` in its details, the caller's other scopes (those its token may use)
 * holding that key.
 */
export const memoryHistory: ServiceFn = (svc, p, raw) => {
  refuseRememberEnds(raw);
  const input = parseInput(HistoryInput, raw);
  return notes(svc.store, 'history', identify(p, input), { ...notesBody(svc, input), ...readableScopes(p) });
};

/**
 * memory_handoff_create: a handoff capsule on a task. A `to` naming no agent that may act for the
 * caller's user is stored as sent, with a warning in the receipt (the node knows the tokens, not the engine).
 */
export async function memoryHandoffCreate(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(HandoffCreateInput, raw);
  const id = identify(p, input);
  const receipt = await notes(svc.store, 'handoff_create', id, notesBody(svc, input));
  const warning = input.to === undefined ? null : await addresseeWarning(svc.store, id, input.to);
  return warning === null ? receipt : { ...receipt, warnings: [warning] };
}

/**
 * memory_handoff_resume: the newest unexpired capsule of a task, or those addressed to the caller.
 * An empty list names the caller's other scopes where some wait (`elsewhere`): of a token limited
 * to scopes, only those (`readableScopes`; the engine reads only the caller's tenant and user).
 */
export async function memoryHandoffResume(svc: Service, p: Principal, raw: unknown): Promise<Reply> {
  const input = parseInput(HandoffResumeInput, raw);
  return notes(svc.store, 'handoff_resume', identify(p, input), { ...notesBody(svc, input), ...readableScopes(p) });
}

/**
 * `verb`'s `fn` after the checks the principal alone decides, so a refused role, user or scope is
 * 403 before any 422.
 */
function authorized(verb: string, fn: ServiceFn): ServiceFn {
  return (svc, p, raw) => {
    refuseRole(p, verb);
    preauthorize(p, raw);
    chargeUser(svc, p, verb, raw);
    return fn(svc, p, raw);
  };
}

/** The service function of each verb, as both adapters call it. */
export const SERVICES: Record<string, ServiceFn> = Object.fromEntries(
  Object.entries({
    status: memoryStatus,
    remember: memoryRemember,
    document: memoryDocument,
    relate: memoryRelate,
    recall: memoryRecall,
    context: memoryContext,
    query: memoryQuery,
    forget: memoryForget,
    export: memoryExport,
    import: memoryImport,
    note_write: memoryNoteWrite,
    note_list: memoryNoteList,
    history: memoryHistory,
    handoff_create: memoryHandoffCreate,
    handoff_resume: memoryHandoffResume,
    delete_user: deleteUser,
    audit,
  } satisfies Record<string, ServiceFn>).map(([verb, fn]) => [verb, authorized(verb, fn)]),
);
