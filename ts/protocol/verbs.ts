import type { z } from 'zod';
import { DocumentInput } from './document.js';
import {
  AuditInput,
  ContextInput,
  DeleteUserInput,
  ExportInput,
  ForgetInput,
  ImportInput,
  RecallInput,
  RelateInput,
  RememberInput,
  StatusInput,
} from './knowledge.js';
import { HandoffCreateInput, HandoffResumeInput, HistoryInput, NoteListInput, NoteWriteInput } from './notes.js';
import { QueryInput } from './query.js';
import {
  ContextReply,
  DeleteUserReply,
  DocumentReply,
  ExportReply,
  ForgetReply,
  ImportReply,
  QueryReply,
  RecallReply,
  RelateReply,
  RememberReply,
  StatusReply,
} from './replies-knowledge.js';
import {
  HandoffCreateReply,
  HandoffResumeReply,
  HistoryReply,
  NoteListReply,
  NoteWriteReply,
} from './replies-notes.js';

/** One verb as every adapter sees it: its input schema and the description a model reads. */
export interface VerbSpec {
  /** The route segment: `POST /v1/memory/<verb>`. */
  verb: string;
  /** The MCP tool name, or null for an HTTP-only verb. */
  tool: string | null;
  title: string;
  description: string;
  input: z.ZodType;
  /** The shape of its 200 reply (DESIGN.md "Reply shapes"), in the OpenAPI document. */
  reply: z.ZodType;
  /** Whether the verb changes the store (MCP `readOnlyHint` is the opposite). */
  writes: boolean;
}

/** The verbs the node serves, in the order tools are listed. */
export const VERBS: readonly VerbSpec[] = [
  {
    verb: 'status',
    tool: 'memory_status',
    title: 'Memory status',
    writes: false,
    input: StatusInput,
    reply: StatusReply,
    description:
      'Health of the memory node and what it can do (retrieval channels, budgets, whether meaning search is armed), ' +
      'and the scopes you have written with their counts. Send `scope` to also get that scope’s ontology: entity ' +
      'types, relation types with counts and the exact relation spellings to reuse when you remember or relate. ' +
      'Call it once at the start of a session, or before storing facts, to reuse existing type names.',
  },
  {
    verb: 'remember',
    tool: 'memory_remember',
    title: 'Remember',
    writes: true,
    input: RememberInput,
    reply: RememberReply,
    description:
      'Store knowledge. Send one of: `content` (raw text, cut into passages), `messages` ([{role, content}] of a ' +
      'conversation), `passages` ([{text, mentions}], each mention must occur in its text), and/or `facts` ' +
      '({entities:[{name,type}], relations:[{source,target,type}]}). Add `date` (ISO 8601: when it was said or true) ' +
      'and `source` (a label shown in citations). `content` and `messages` are stored as passages linked to the ' +
      'entities already stored or sent in `facts` that they name; they create no entity or fact from the text ' +
      '(only `passages` mentions create entities), and memory_recall answers from entities and facts: send ' +
      '`facts` beside the text for the people and things it is about. The same content and date sent again ' +
      'changes nothing (`already: true`; cite the reply’s `source`, the one stored). The reply counts what was ' +
      'stored and lists `rejected` passages with the reason, and in `possible_duplicates` the entities it created ' +
      'whose name is spelled like a stored one: if you meant the stored one, memory_forget the new one by ' +
      '`subject` and send the facts again with the stored spelling.',
  },
  {
    verb: 'document',
    tool: 'memory_document',
    title: 'Remember a document',
    writes: true,
    input: DocumentInput,
    reply: DocumentReply,
    description:
      'Store a file: `content_base64` (PDF, DOCX, HTML or UTF-8 text, at most 5,000,000 bytes decoded, its text at ' +
      'most 1 MiB) and its ' +
      '`name` (the citation source unless `source` is given); optional `date`. The type is read from the bytes, ' +
      'never the name. Its text is extracted in reading order (paragraphs, headings, list items; PDF paragraphs ' +
      'rebuilt from layout) and stored like `memory_remember` content, then found by recall and context with ' +
      'citations. The reply has `doc_id`, `source` (as stored: a file stored ' +
      'before keeps its first name), the type, and the text with its blocks (page, paragraph, UTF-8 byte span in the text) ' +
      'when at most 16 KiB, else sizes. An unknown type is refused (415) before anything is stored; a truncated ' +
      'or broken file is DOCUMENT_CORRUPT, an encrypted or scanned PDF DOCUMENT_NOT_READABLE.',
  },
  {
    verb: 'relate',
    tool: 'memory_relate',
    title: 'Relate two entities',
    writes: true,
    input: RelateInput,
    reply: RelateReply,
    description:
      'Assert one typed relation `from` → `to` (e.g. from "Priya Raman", type "works_at", to "Acme"); missing ' +
      'entities are created. `attributes` may carry `valid_from`/`valid_to`; other attributes said again hold ' +
      'from `date` (else now). `replaces: true` ends the subject’s other relations of that type at `date` (else ' +
      'now; kept for `valid_at` reads; re-asserting an old one restores it). Reuse type spellings from ' +
      'memory_status (`works at` is stored as a stored `works_at`). The reply lists the relation and what was ' +
      '`ended` or `restored`. Check `possible_duplicates`: entities this call created named like a stored one ' +
      '(`Priya Ramen`, `Priya Raman`); if you meant the stored one, memory_forget the new one by `subject` and ' +
      'relate again with the stored spelling.',
  },
  {
    verb: 'recall',
    tool: 'memory_recall',
    title: 'Recall an entity',
    writes: false,
    input: RecallInput,
    reply: RecallReply,
    description:
      'Everything stored about one entity: send `subject` (a name) or `attribute` {key, value}. A subject matches ' +
      'a stored name exactly, up to case, as a word of a longer name (`Priya` → `Priya Raman`) or as a near ' +
      'spelling (`Priya Ramen`): `seeding.matched` says which (`exact`, `case`, `word`, `near`) and `seeding.name` ' +
      'the name answered; check it before you rely on a `word` or `near` match. ' +
      'Returns facts in both directions, each with a `citation` (source, quoted sentence); derived facts have ' +
      '`derived: true`. Read `state` first: `answered` — use and cite the facts; `nothing_stored` — never invent; ' +
      'with `text_mentions`, passages name it: ask memory_context; else say you do not know; ' +
      '`could_not_judge` — see why. Without `as_of`/`valid_at`, facts are those known and true now; ' +
      '`outside_time` counts facts true or recorded at other times (read again at its `next_valid_from`/' +
      '`last_valid_to` with `valid_at`, or `next_recorded_at` with `as_of`). `as_of`: what was known then; ' +
      '`valid_at`: what was true then; `k`: max facts (default 50, max 1000, newest first; `omitted` counts the ' +
      'rest: pass `next` as `cursor` to page); `hops` 1–3 (default 1); `compact`: shorter citations. A subject ' +
      'matching no name (`Dr. Priya Raman`, `Priya R.`) is `nothing_stored` with names it may mean in ' +
      '`did_you_mean`: ask again with one.',
  },
  {
    verb: 'context',
    tool: 'memory_context',
    title: 'Context for a question',
    writes: false,
    input: ContextInput,
    reply: ContextReply,
    description:
      'Ranked, cited items to answer a `question` from: facts, passages and entities reached from the names and ' +
      'types the question mentions. Read `grounding.verdict` before answering: `grounded` — a cited item covers ' +
      'the question (or each part), answer from it and cite; `grounded_by_meaning` — covered in meaning, not word for word, cite ' +
      'and say so; `related` — items touch the question but `uncovered` words are not supported, say what is ' +
      'missing; `uncited` — only entities answer, nothing cited, say it is unverified; ' +
      '`nothing_stored` — say you do not know; `could_not_judge` — the question was too vague, ask. Never answer ' +
      'beyond the items. ' +
      'Options: `hops` 0–3 (default 2), `k` 1–100 (default 8), `as_of` (what was known then), `valid_at` (what ' +
      'was true then; without both, what is known and true now), `compact`, and a pack: `tokenBudget`/' +
      '`maxItems`/`purpose` return `context` text within the budget (tokens = UTF-8 bytes / 4); the whole reply ' +
      'is about three times the budget plus a few hundred bytes an item (twice with `compact`). Your matching ' +
      'notes and handoffs compete too (`kind: "note"`/`"handoff"`; with `taskId`, that task\'s) and count for the verdict as passages do.',
  },
  {
    verb: 'query',
    tool: 'memory_query',
    title: 'Multi-step query',
    writes: false,
    input: QueryInput,
    reply: QueryReply,
    description:
      'A question with several parts ("who leads X and where is Y"): split on conjunctions, or send `subqueries`; ' +
      'each part runs as a memory_context, and the evidence is fused and packed. Read `sufficiency` first: ' +
      '`sufficient` — every step grounded with enough evidence; `partial` — answer what is covered and say what ' +
      'is not (`sufficiencyWhy` says what is missing, or that a step timed out before searching); `insufficient` — ' +
      'every part was searched and nothing stored answers: say you do not know. `fallback` says when the query hit `timeoutMs`, `maxSteps` ' +
      'or asked for reasoning the planner does not do (`unsupported_complexity`). `includeHistory` adds who ' +
      'changed the notes and entities reached. Options as memory_context: `hops`, `k` (items per step), `as_of`, ' +
      '`valid_at`, `compact` (citations without the quoted text), and the pack ' +
      '(`tokenBudget`/`maxItems`/`purpose`), which also bounds `evidence` to the items in `context`.',
  },
  {
    verb: 'forget',
    tool: 'memory_forget',
    title: 'Forget',
    writes: true,
    input: ForgetInput,
    reply: ForgetReply,
    description:
      'Erase memory. Send exactly one of: `subject` (an exact entity name: the entity, its facts and the passages ' +
      'naming it), `fact` ({from, to, type} from either end, or {id}), `passage` (a doc id), `source` (a label), `attribute` ' +
      '{subject, key}, `note` {key}, `handoff` {taskId} (all for that task), or `all: true` (the whole ' +
      'scope: knowledge, notes, handoffs). Forgetting again replies `already_forgotten` once nothing is left (a ' +
      'subject forgotten again takes text naming it since); a name that never existed is NOT_FOUND with "did ' +
      'you mean" names (for a `fact` with both ends stored: the facts between them; send a detail\'s `fact` ' +
      'back). The reply counts what went and what was kept and why. Only forget when the user asks.',
  },
  {
    verb: 'export',
    tool: 'memory_export',
    title: 'Export a scope',
    writes: false,
    input: ExportInput,
    reply: ExportReply,
    description:
      'One page of the scope as JSON records: header, entities, facts with provenance and ended state, documents ' +
      'with their live passages, notes (any visibility or task, except other agents’ own notes, which are not ' +
      'counted either; kind as `noteKind`, earlier versions in `versions`; one too large for a page is split ' +
      'over records, `continued` on all but the last) and handoffs (expired ones too). Private notes only with ' +
      '`includePrivate` when the node allows them (else the header’s `withheld` counts them). Pass `next` as ' +
      '`cursor` for the next page (null: done). `limit` records per page (default 500, max 5000); a page’s ' +
      'records fit in `maxBytes` of JSON (default 64 KiB, at most 4 MiB; a larger document comes alone). Each ' +
      'page can be sent to memory_import as it came.',
  },
  {
    verb: 'import',
    tool: 'memory_import',
    title: 'Import records',
    writes: true,
    input: ImportInput,
    reply: ImportReply,
    description:
      'Load `records` from a memory_export page (header, entity, fact, document, note, handoff) into this scope. ' +
      'Pages may come in any order and twice without duplicates; history is kept. A note already holding the same ' +
      'value is unchanged; a different value becomes the next version here. The reply counts what was imported ' +
      'and unchanged by kind and lists `skipped` (index and reason) and `not_reproduced`. Records keep their ' +
      'author and times: an agent token imports only records its own agent wrote, and none is taken stamped ' +
      'later than now.',
  },
  {
    verb: 'note_write',
    tool: 'memory_note_write',
    title: 'Write a note',
    writes: true,
    input: NoteWriteInput,
    reply: NoteWriteReply,
    description:
      'Save a small structured note under a `key`: a user preference, a user fact, task state or a decision ' +
      '(`kind`, required when creating), with `value` any JSON. `visibility` defaults to `user`; a task note ' +
      'needs its `taskId` on every write, else a new note is made beside it (receipt `warnings`). `writeMode: ' +
      'merge` deep-merges objects; arrays and other values replace whole. For safe ' +
      'updates send `expectedVersion` (0 = create only); on VERSION_CONFLICT read the note again and apply your ' +
      // What an idempotencyKey does is its field's description (per agent, replays the receipt).
      'change to it before retrying. Send an `idempotencyKey` when retrying. `confidence` needs `confidenceBasis`. The receipt gives ' +
      '`version`, `evolution` (created|replaced|merged), and `private: true` when the note is private.',
  },
  {
    verb: 'note_list',
    tool: 'memory_note_list',
    title: 'List notes',
    writes: false,
    input: NoteListInput,
    reply: NoteListReply,
    description:
      'Current notes you may see, filtered by `key`, `kind`, `visibility`, `taskId`, or found by `query` (each ' +
      'item then has a retrieval receipt). Task notes come only with their `taskId`; an empty first page ' +
      'names in `did_you_mean` notes you may mean. Pass `nextCursor` back as `cursor` for more with the same ' +
      'filters. `as_of` reads the notes as they were then.',
  },
  {
    verb: 'history',
    tool: 'memory_history',
    title: 'History',
    writes: false,
    input: HistoryInput,
    reply: HistoryReply,
    description:
      'Who changed what and when: the events of one note (`key`, with `visibility`/`taskId` where needed), one ' +
      'entity (`subject`, its stored name in any case) or one fact (`fact`: {id} as recall gives it, or ' +
      '{from, to, type} from either end of a symmetric or inverse type). A note, subject ' +
      'or fact never stored is NOT_FOUND with `did_you_mean` (names it may mean; notes, and for a fact with both ends ' +
      "stored, the facts between them: send a detail's `note` or `fact` back); one " +
      "forgotten has no events (a note's `forgotten`: who, when). Oldest first (`newestFirst` for latest first), with before/after values and " +
      'the writing agent; each event names its `target`. Up to `limit` events a page; pass `nextCursor` ' +
      'back as `cursor`. `compact` leaves out before/after (keeps the op and the `patch` written).',
  },
  {
    verb: 'handoff_create',
    tool: 'memory_handoff_create',
    title: 'Hand off a task',
    writes: true,
    input: HandoffCreateInput,
    reply: HandoffCreateReply,
    description:
      'Leave a handoff capsule on `taskId` for the next agent: `summary`, `status`, `decisions`, `nextSteps`, ' +
      '`artifacts`, `blockers`, optional `expiresAt` (ISO 8601, in the future) and `to` (an agent name; one no ' +
      "token of your user holds is stored, and the receipt's `warnings` says so with near names). A newer " +
      'handoff on the task replaces it (the receipt names it in `replaces`). Send an `idempotencyKey` (yours alone) when retrying: the same request ' +
      'again replays the first receipt, marked `replayed: true`, and leaves no second capsule. Call it before ' +
      'you stop work that another agent will continue.',
  },
  {
    verb: 'handoff_resume',
    tool: 'memory_handoff_resume',
    title: 'Resume a task',
    writes: false,
    input: HandoffResumeInput,
    reply: HandoffResumeReply,
    description:
      'Pick up a task: with `taskId`, the newest unexpired handoff (`state: resumed`; `expired` with ' +
      '`expiredAt` when the newest has expired; `none` if there is none, `did_you_mean` naming tasks spelled alike; ' +
      '`skippedExpired` lists up to 20 newer expired ones, ' +
      '`skippedExpiredCount` counts them). Without `taskId`, the unexpired handoffs addressed to you, newest ' +
      'first, up to `limit` (default 20; refused with `taskId`), with `nextCursor` to pass back as `cursor` for ' +
      'the next page; one a newer handoff of its task replaced has ' +
      '`superseded: true` and `supersededBy`: resume that task instead. Call it when you start on a task ' +
      'someone else may have begun.',
  },
  {
    verb: 'delete_user',
    tool: null,
    title: 'Delete a user',
    writes: true,
    input: DeleteUserInput,
    reply: DeleteUserReply,
    description: 'Erase every scope of the caller’s user (send `confirm: true`). HTTP only.',
  },
  {
    verb: 'audit',
    tool: null,
    title: 'Audit',
    writes: false,
    input: AuditInput,
    reply: HistoryReply,
    description:
      'The calling agent’s own write events, oldest first (`newestFirst`: latest first), paged by `cursor`. HTTP only.',
  },
];

/** The spec of `verb`, or undefined. */
export function verbSpec(verb: string): VerbSpec | undefined {
  return VERBS.find((v) => v.verb === verb);
}
