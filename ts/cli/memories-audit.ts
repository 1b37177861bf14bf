import { AgentName } from '../protocol/admin.js';
import { clip } from './clip.js';
import { usage } from './failure.js';
import { type Body, type MemoriesArgs, withCaller } from './memories-caller.js';

/** Characters of what an event wrote, on its line of the text output. */
const WROTE = 100;

/** What an event acted on, as an operator names it (the event's `target`, docs/design/history.md). */
function targetText(family: unknown, t: Body): string {
  if (family === 'note') {
    const where =
      t.visibility === 'user'
        ? ''
        : ` (${String(t.visibility)}${t.taskId === undefined ? '' : `:${String(t.taskId)}`})`;
    return `${String(t.key)}${where}`;
  }
  if (family === 'entity') return String(t.name);
  if (family === 'fact') return `${String(t.from)} -[${String(t.type)}]-> ${String(t.to)}`;
  if (family === 'document') return `doc ${String(t.doc_id)}`;
  if (family === 'handoff') return `task ${String(t.taskId)}`;
  if (family === 'forget') return String(t.form);
  return JSON.stringify(t);
}

/**
 * One event a line: sequence, time, what kind of write, what it acted on, and what it said (its
 * input patch, else what it left: a forget's counts), cut to `WROTE` characters.
 */
function eventLine(e: Body): { text: string; cut: boolean } {
  const wrote =
    e.redacted === undefined ? clip(e.patch ?? e.after, WROTE) : { text: `(${String(e.redacted)})`, cut: false };
  const target = targetText(e.family, (e.target ?? {}) as Body);
  return {
    text: `${String(e.seq)}  ${String(e.at)}  ${String(e.family)} ${String(e.op)}  ${target}  ${wrote.text}`,
    cut: wrote.cut,
  };
}

/**
 * `cairn memories audit --agent NAME` (the `audit` verb, `POST /v1/admin/agents/NAME/memory/audit`
 * through a running node): who did what, one agent at a time, as the agent's own token reads it:
 * its write events in the user and scope named, oldest first (`--newest`: latest first), every page. `--agent` is required:
 * the audit is one agent's, and the operator's own (the default of the other commands) would read
 * as "nothing happened". On the store the operator sees private notes' events whole; a node shows
 * them redacted unless it allows private notes.
 */
export async function runAudit(a: MemoriesArgs, env: NodeJS.ProcessEnv): Promise<number> {
  if (a.agent === undefined) {
    throw usage(
      '--agent',
      'give the agent whose events to list (cairn memories audit --agent NAME; cairn token list names the agents)',
    );
  }
  const name = AgentName.safeParse(a.agent);
  if (!name.success) throw usage('--agent', name.error.issues[0]?.message ?? 'invalid');
  const events = await withCaller(a, env, async (call, node) => {
    const all: Body[] = [];
    let cursor: string | undefined;
    do {
      const body: Body = {
        limit: 100,
        ...(a.newest === true ? { newestFirst: true } : {}),
        // The operator owns the store: on it, private notes' events are theirs to read whole.
        ...(node === null ? { includePrivate: true } : {}),
        ...(cursor === undefined ? {} : { cursor }),
      };
      const page = await call('audit', body, name.data);
      all.push(...((page.events ?? []) as Body[]));
      cursor = (page.nextCursor as string | null | undefined) ?? undefined;
    } while (cursor !== undefined);
    return all;
  });
  if (a.json) {
    process.stdout.write(`${JSON.stringify({ events })}\n`);
    return 0;
  }
  const lines = events.map(eventLine);
  process.stdout.write(
    lines.length === 0 ? `no events of agent ${name.data} here\n` : `${lines.map((l) => l.text).join('\n')}\n`,
  );
  if (lines.some((l) => l.cut)) {
    process.stderr.write(
      `cairn memories: what an event wrote is cut at ${WROTE} characters (…): --json prints every event whole\n`,
    );
  }
  return 0;
}
