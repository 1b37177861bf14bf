import { EXPORT_MAX_BYTES } from '../protocol/knowledge.js';
import { HistoryInput, NoteListInput } from '../protocol/notes.js';
import type { NodeFile } from '../server/node-file.js';
import { clip } from './clip.js';
import { CliFailure, missing, usage } from './failure.js';
import { CLI_AGENT } from './import.js';
import { runAudit } from './memories-audit.js';
import { type Body, type Call, type MemoriesArgs, withCaller } from './memories-caller.js';
import { withheldWarning } from './node-view.js';
import { userScope } from './user-scope.js';

/** The CLI option that carries each field of a notes verb's input, as the user typed it. */
const OPTION: Record<string, string> = {
  key: 'KEY',
  visibility: '--visibility',
  taskId: '--task',
  kind: '--kind',
  query: '--query',
};

/**
 * The note's address fields the verbs share. `--task` alone means a task note: only task notes
 * have a task, and without `visibility` the verbs would look up the user-visibility note instead.
 */
function address(a: MemoriesArgs): Body {
  const visibility = a.visibility ?? (a.task === undefined ? undefined : 'task');
  return {
    ...(visibility === undefined ? {} : { visibility }),
    ...(a.task === undefined ? {} : { taskId: a.task }),
  };
}

/**
 * The address of the one note show, history and forget name: as `address`, and `--agent NAME`
 * means that agent's agent-visibility note (only an agent note belongs to one agent), so another
 * `--visibility` beside it is refused rather than quietly looking up a note of the user.
 */
function noteAddress(a: MemoriesArgs): Body {
  if (a.agent === undefined) return address(a);
  if (a.visibility !== undefined && a.visibility !== 'agent') {
    throw usage(
      '--visibility',
      `--agent names an agent-visibility note; leave out --visibility ${a.visibility} (or --agent, to reach a ${a.visibility} note)`,
    );
  }
  return { visibility: 'agent', ...(a.task === undefined ? {} : { taskId: a.task }) };
}

function checked<T extends { safeParse: (v: unknown) => { success: boolean; error?: { issues: unknown[] } } }>(
  schema: T,
  body: Body,
): Body {
  const r = schema.safeParse(body);
  if (!r.success) {
    const i = r.error?.issues[0] as { path?: (string | number)[]; message?: string } | undefined;
    throw usage(OPTION[String(i?.path?.[0])] ?? 'KEY', i?.message ?? 'invalid');
  }
  return body;
}

/** `value` as a shell word: as it is when it needs no quoting. */
const word = (value: string) => (/^[\w.:@/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`);

/**
 * `history KEY`'s refusal when the key names several notes (the engine lists each as a `note` to
 * send back, in the verb's fields), said in this command's options for each.
 */
function whichNote(err: unknown, key: string, agent: string): unknown {
  if (!(err instanceof CliFailure) || err.code !== 'VALIDATION_ERROR') return err;
  const notes = err.details.flatMap((d) => {
    const note = (d as { note?: Body }).note;
    return note === undefined ? [] : [note];
  });
  if (notes.length === 0) return err;
  const options = notes.map((n) =>
    n.visibility === 'task'
      ? `--task ${word(String(n.taskId))}`
      : n.visibility === 'agent'
        ? `--agent ${word(agent)}`
        : '--visibility user',
  );
  const message = `key ${key} names ${notes.length} notes: add ${options.join(', or ')} to say which`;
  return new CliFailure('VALIDATION_ERROR', message, err.exitCode, err.details);
}

/** Every note of the scope, whatever its visibility, task or agent (the export's note records),
 * narrowed by `--kind`, `--visibility` and `--task`. */
async function everyNote(call: Call, a: MemoriesArgs, node: NodeFile | null): Promise<Body[]> {
  const all: Body[] = [];
  let cursor: string | undefined;
  do {
    const page = await call('export', {
      limit: 5000,
      maxBytes: EXPORT_MAX_BYTES,
      includePrivate: true,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const r of (page.records ?? []) as Body[]) {
      // Only a node withholds private notes (on the store the operator sees them): say so.
      const warning = r.kind === 'header' && node !== null ? withheldWarning(r.withheld, node, 'memories list') : null;
      if (warning !== null) process.stderr.write(`cairn memories: warning: ${warning}\n`);
      // A note too large for one page comes as several records; all but its last (`continued`)
      // hold earlier versions only.
      if (r.kind !== 'note' || r.continued === true) continue;
      const { noteKind, version } = r;
      // The record has the version it is, not the one it replaced: versions are numbered on, one a write.
      all.push(noteItem({ ...r, kind: noteKind, supersedes: Number(version) > 1 ? Number(version) - 1 : null }));
    }
    cursor = (page.next as string | null | undefined) ?? undefined;
  } while (cursor !== undefined);
  return all.filter(
    (n) =>
      (a.kind === undefined || n.kind === a.kind) &&
      (a.visibility === undefined || n.visibility === a.visibility) &&
      (a.task === undefined || n.taskId === a.task),
  );
}

/** The fields of a note `list --json` and `show --json` print, in this order: `memory_note_list`'s note. */
const NOTE_FIELDS = [
  'id',
  'key',
  'value',
  'kind',
  'visibility',
  'taskId',
  'private',
  'version',
  'supersedes',
  'agent',
  'createdAt',
  'updatedAt',
  'confidence',
  'confidenceBasis',
  'owner',
  'receipt',
];

/**
 * One note as `list` and `show` print it, whichever verb read it: `memory_note_list`'s note
 * (DESIGN.md §2), `owner` on an agent-visibility note (the agent `--agent` names to reach it) and
 * `receipt` on one `--query` found. Found by an audit: `list` printed the export's record (with
 * its `origin` digest, without `supersedes`) and `show` the verb's note, so one note had two shapes.
 */
function noteItem(n: Body, owner?: string): Body {
  // The verb's note is the caller's own when agent-visible: it was read as `owner` (else as its writer).
  const item: Body = n.visibility === 'agent' ? { ...n, owner: n.owner ?? owner ?? n.agent } : n;
  return Object.fromEntries(NOTE_FIELDS.filter((f) => item[f] !== undefined).map((f) => [f, item[f]]));
}

/** The notes one `note_list` with `body` finds, every page, as `noteItem`s. */
async function listAll(call: Call, body: Body, agent?: string): Promise<Body[]> {
  const all: Body[] = [];
  let cursor: string | undefined;
  do {
    const page = await call('note_list', { ...body, limit: 100, ...(cursor === undefined ? {} : { cursor }) }, agent);
    all.push(...((page.notes ?? []) as Body[]).map((n) => noteItem(n, agent)));
    cursor = (page.nextCursor as string | null | undefined) ?? undefined;
  } while (cursor !== undefined);
  return all;
}

const score = (n: Body) => Number((n.receipt as { score?: unknown } | undefined)?.score ?? 0);

/**
 * What a hybrid `--query` finds among the notes the plain `list` shows (`everyNote`), best first.
 * One `note_list` sees only what its caller may read: user notes, a task's notes only when it names
 * the task, an agent's own notes only as that agent. So the search runs once for the user notes,
 * once per task and once per agent that the scope's notes have, and the finds are merged by score.
 */
async function byQuery(call: Call, a: MemoriesArgs, filters: Body, node: NodeFile | null): Promise<Body[]> {
  const query = { ...filters, includePrivate: true };
  // `--task` names one task: its notes are all a search with it can find, as the plain list's.
  if (a.task !== undefined) return listAll(call, query);
  const shown = await everyNote(call, a, node);
  const tasks = [...new Set(shown.filter((n) => n.visibility === 'task').map((n) => String(n.taskId)))];
  const agents = [...new Set(shown.filter((n) => n.visibility === 'agent').map((n) => String(n.agent)))];
  const found: Body[] = [];
  // One after another: on the store directly, the calls share one open store.
  if (shown.some((n) => n.visibility === 'user'))
    found.push(...(await listAll(call, { ...query, visibility: 'user' })));
  for (const taskId of tasks) found.push(...(await listAll(call, { ...query, visibility: 'task', taskId })));
  for (const agent of agents) found.push(...(await listAll(call, { ...query, visibility: 'agent' }, agent)));
  // Stable: equal scores keep the order of the runs (user, tasks, agents) and within each run.
  return found
    .map((n, i) => ({ n, i }))
    .sort((x, y) => score(y.n) - score(x.n) || x.i - y.i)
    .map(({ n }) => n);
}

/** Characters of a note's value on a line of `list`, and on a line of `history` (before, after). */
const LIST_VALUE = 80;
const HISTORY_VALUE = 100;

const line = (n: Body) =>
  `${String(n.key)}  v${String(n.version)}  ${String(n.kind)}  ${String(n.visibility)}${n.taskId === undefined ? '' : `:${String(n.taskId)}`}  ${String(n.agent)}  ${String(n.updatedAt ?? '')}  ${clip(n.value, LIST_VALUE).text}`;

type Side = { value?: unknown; version?: unknown } | null | undefined;

const PRIVATE_WITHHELD =
  'values withheld: a private note, and the node runs without CAIRN_ALLOW_PRIVATE=1 (stop it and run this on the store, or restart it with CAIRN_ALLOW_PRIVATE=1)';

/**
 * One event of a note's history as an operator reads it (DESIGN.md §2: who, when, what,
 * before/after): the version it made, when, by whom, how, then the value before it (a replace or
 * merge), a merge's patch and the value after it, each on its own line and cut to `HISTORY_VALUE`.
 */
function eventBlock(e: Body): { text: string; cut: boolean } {
  const before = e.before as Side;
  const after = e.after as Side;
  const version = after?.version ?? before?.version;
  // A create has no before; a replace or merge has both, and a merge its patch: what it changed,
  // which a large value's cut rendering may not reach.
  const patch = e.op === 'merge' ? (e.patch as Side) : null;
  const sides: [string, Side][] = [
    ['before:', before],
    ['patch: ', patch],
    ['after: ', after],
  ];
  const shown = sides.flatMap(([label, side]) => (side == null ? [] : [{ label, ...clip(side.value, HISTORY_VALUE) }]));
  const head = `${version === undefined ? 'v?' : `v${String(version)}`}  ${String(e.at)}  ${String(e.agent)}  ${String(e.op)}`;
  // A node that allows no private notes shows their events without values: say so, not a bare `v?`.
  const withheld = e.redacted === 'private' ? [`    ${PRIVATE_WITHHELD}`] : [];
  return {
    text: [head, ...withheld, ...shown.map((s) => `    ${s.label} ${s.text}`)].join('\n'),
    cut: shown.some((s) => s.cut),
  };
}

/**
 * What an empty, unfiltered list says on stderr: the user's scopes that hold notes (from
 * memory_status, which counts only this user's), so a mistyped `--scope` or `--user` is seen
 * rather than read as "no notes" (found by a CLI review; `cairn export` refuses that case).
 */
async function noNotesHere(call: Call, a: MemoriesArgs): Promise<string> {
  const { user, scope } = userScope(a.user ?? 'default', a.scopes?.[0] ?? 'default');
  let holding: string[];
  try {
    const scopes = ((await call('status', {})).scopes ?? []) as { scope?: unknown; notes?: unknown }[];
    holding = scopes.filter((s) => Number(s.notes) > 0 && s.scope !== scope).map((s) => String(s.scope));
  } catch {
    // The list itself is the answer; without the scopes it says only that this one is empty.
    return `cairn memories: user ${user} has no notes in scope ${scope}\n`;
  }
  const where =
    holding.length === 0
      ? ', nor in any other scope (is --user right?)'
      : `; user ${user}'s scopes with notes: ${holding.join(', ')} (--scope S)`;
  return `cairn memories: user ${user} has no notes in scope ${scope}${where}\n`;
}

/** The other scopes an engine `elsewhere` names, said in this command's option; '' when none. */
function otherScopes(elsewhere: unknown): string {
  const scopes = ((elsewhere as { scopes?: { scope?: unknown; notes?: unknown }[] } | undefined)?.scopes ?? []).map(
    (s) => `${String(s.scope)} (${String(s.notes)})`,
  );
  return scopes.length === 0 ? '' : `; scopes holding it: ${scopes.join(', ')} (--scope S)`;
}

/**
 * `history KEY`'s 404 said in this command's options: the engine's names the other scopes as
 * fields of the verb (`send scope`), which this command takes as `--scope`.
 */
function historyMiss(err: unknown, key: string): unknown {
  if (!(err instanceof CliFailure) || err.code !== 'NOT_FOUND') return err;
  const found = err.details.find((d) => (d as { elsewhere?: unknown }).elsewhere !== undefined);
  if (found === undefined) return err;
  return new CliFailure(
    'NOT_FOUND',
    `no history for key ${key} here${otherScopes((found as { elsewhere: unknown }).elsewhere)}`,
  );
}

/**
 * `cairn memories list|show KEY|history KEY|forget KEY` (DESIGN.md §4; `audit` in memories-audit.ts): the notes of a user's
 * scope as an operator reads them. `list` shows every note (every visibility, task and agent,
 * private ones too), or with `--query` what the hybrid search finds among those same notes. Through the running node's API
 * with the admin token when a node holds the store (as agent `--agent` through the admin routes
 * when given), else on the store as agent `--agent` (default `cli`); agent-visibility notes are
 * their agent's. Exit 0 done, 1 refused or failed (a key that is not there), 2 bad usage.
 */
export async function runMemories(sub: string, a: MemoriesArgs, env = process.env): Promise<number> {
  const out = (value: Body, text: string) => process.stdout.write(a.json ? `${JSON.stringify(value)}\n` : text);
  if ((a.scopes?.length ?? 0) > 1) throw usage('--scope', 'give one scope');
  if (sub === 'audit') return runAudit(a, env);
  if (sub === 'list' && a.key === undefined) {
    const filters: Body = {
      ...address(a),
      ...(a.kind === undefined ? {} : { kind: a.kind }),
      ...(a.query === undefined ? {} : { query: a.query }),
    };
    checked(NoteListInput, filters);
    const notes = await withCaller(a, env, async (call, node) => {
      // The plain list reads the export, which would quietly find nothing for a combination the
      // verb refuses (a task beside visibility user or agent): the verb is asked, so its refusal
      // reaches the operator as it is.
      if (a.task !== undefined && filters.visibility !== 'task') await call('note_list', { ...filters, limit: 1 });
      const found = await (a.query === undefined ? everyNote(call, a, node) : byQuery(call, a, filters, node));
      if (found.length === 0 && Object.keys(filters).length === 0) process.stderr.write(await noNotesHere(call, a));
      return found;
    });
    out({ notes }, notes.length === 0 ? 'no notes\n' : `${notes.map(line).join('\n')}\n`);
    if (!a.json && notes.some((n) => clip(n.value, LIST_VALUE).cut)) {
      process.stderr.write(
        `cairn memories: values cut at ${LIST_VALUE} characters (…): \`cairn memories show KEY\` prints one whole (with --task T for a task note, --agent NAME for an agent's), --json all of them\n`,
      );
    }
    return 0;
  }
  if (a.key === undefined && ['show', 'history', 'forget'].includes(sub)) {
    throw missing('KEY', `the note's key (cairn memories ${sub} KEY; \`cairn memories list\` shows them)`);
  }
  if (a.key === undefined || !['show', 'history', 'forget'].includes(sub)) {
    throw new CliFailure('VALIDATION_ERROR', 'give list, audit, or show|history|forget KEY (see cairn --help)', 2);
  }
  const key = a.key;
  const body = checked(HistoryInput, { key, ...noteAddress(a) });
  // `list` names private notes (the operator's to see): `show` and `history` read them too, where
  // the store or the node's policy allows. Without it a listed private note was "no note here".
  const read = { ...body, includePrivate: true };
  if (sub === 'show') {
    const r = await withCaller(a, env, (call) => call('note_list', { ...read, limit: 100 }));
    const notes = ((r.notes ?? []) as Body[]).map((n) => noteItem(n, a.agent));
    if (notes.length === 0) {
      // `list` shows every note, `show` looks up one address: say which others the key may be at.
      const elsewhere =
        a.agent === undefined && a.task === undefined && a.visibility === undefined
          ? ' (a user note; an agent-visibility note is shown with --agent NAME, a task note with --task T, as `list` names them)'
          : '';
      throw new CliFailure('NOT_FOUND', `no note with key ${key} here${elsewhere}${otherScopes(r.elsewhere)}`);
    }
    out({ notes }, `${notes.map((n) => JSON.stringify(n, null, 2)).join('\n')}\n`);
    return 0;
  }
  if (sub === 'history') {
    // Who forgot the note and when, on the empty first page of a forgotten note.
    let forgotten: { agent: string; at: string } | undefined;
    const events = await withCaller(a, env, async (call) => {
      const all: Body[] = [];
      let cursor: string | undefined;
      do {
        const page = await call('history', {
          ...read,
          ...(a.newest === true ? { newestFirst: true } : {}),
          ...(cursor === undefined ? {} : { cursor }),
        });
        forgotten ??= page.forgotten as typeof forgotten;
        all.push(...((page.events ?? []) as Body[]));
        cursor = (page.nextCursor as string | null | undefined) ?? undefined;
      } while (cursor !== undefined);
      return all;
    }).catch((err: unknown) => {
      throw historyMiss(whichNote(err, key, a.agent ?? CLI_AGENT), key);
    });
    // The verb answers an empty page only for what was forgotten (a key never stored is its 404):
    // found by QA, "no history for key K here" after a forget read as if it had never been written.
    if (events.length === 0) {
      const by = forgotten === undefined ? ' (or its whole scope was)' : ` by ${forgotten.agent} at ${forgotten.at}`;
      const message = `no history for key ${key} here: the note was forgotten${by}, and a forget takes its events with it`;
      throw new CliFailure('NOT_FOUND', message);
    }
    const blocks = events.map(eventBlock);
    out({ events }, `${blocks.map((b) => b.text).join('\n')}\n`);
    if (!a.json && blocks.some((b) => b.cut)) {
      process.stderr.write(
        `cairn memories: values cut at ${HISTORY_VALUE} characters (…): \`cairn memories history ${key} --json\` prints them whole\n`,
      );
    }
    return 0;
  }
  const r = await withCaller(a, env, (call) => call('note_forget', body).catch((err) => forgetMiss(err, call, body)));
  out(r, `${String(r.state ?? 'forgotten')}: ${key}\n`);
  return 0;
}

/**
 * `forget KEY`'s 404 with the scopes holding the key, as `show` and `history` say it (found by QA:
 * a forget in a mistyped --scope said only "no note", which reads as a note already gone).
 */
async function forgetMiss(err: unknown, call: Call, body: Body): Promise<never> {
  if (!(err instanceof CliFailure) || err.code !== 'NOT_FOUND') throw err;
  const more = otherScopes((await call('note_list', { ...body, limit: 1 })).elsewhere);
  if (more === '') throw err;
  throw new CliFailure('NOT_FOUND', `${err.message}${more}`, err.exitCode, err.details, `${err.said}${more}`);
}
