import type { Caller } from '../engine/knowledge.js';
import type { NotesVerb } from '../engine/notes.js';
import { findRunningNode, type NodeFile } from '../server/node-file.js';
import { adminCall } from './admin-client.js';
import { needStore } from './data-dir.js';
import { refusedBy } from './failure.js';
import { CLI_AGENT } from './import.js';
import { needAdmin } from './node-view.js';
import { openStore } from './store-owner.js';
import { userScope } from './user-scope.js';

// How every `cairn memories` command reaches a scope's notes: through a running node with the
// admin token, or on the store directly.

/** Arguments of `cairn memories list|show|history|forget|audit`. */
export interface MemoriesArgs {
  dataDir: string;
  json: boolean;
  key?: string | undefined;
  user?: string | undefined;
  scopes?: string[] | undefined;
  agent?: string | undefined;
  kind?: string | undefined;
  visibility?: string | undefined;
  task?: string | undefined;
  query?: string | undefined;
  /** history and audit: the latest event first (the verbs' `newestFirst`), each page going back in time. */
  newest?: boolean | undefined;
}

export type Body = Record<string, unknown>;

/**
 * Runs a notes verb: through the running node with the admin token, or on the store directly; as
 * `agent` when given (an agent's own notes are visible only to it), else as `--agent`'s.
 */
export type Call = (verb: NotesVerb | 'export' | 'status', body: Body, agent?: string) => Promise<Body>;

export async function withCaller<T>(
  a: MemoriesArgs,
  env: NodeJS.ProcessEnv,
  fn: (call: Call, node: NodeFile | null) => Promise<T>,
): Promise<T> {
  const { user, scope } = userScope(a.user ?? 'default', a.scopes?.[0] ?? 'default');
  needStore(a.dataDir);
  const node = findRunningNode(a.dataDir);
  if (node !== null) {
    const admin = env.CAIRN_ADMIN_TOKEN;
    await needAdmin(node, admin, '`cairn memories`');
    // The admin token acts as its own agent; with `--agent` the note verbs run as that agent
    // through the admin routes (the export behind `list` reads every agent's notes either way).
    const baseOf = (agent: string | undefined) =>
      agent === undefined ? '/v1/memory' : `/v1/admin/agents/${encodeURIComponent(agent)}/memory`;
    return fn(async (verb, body, agent = a.agent) => {
      const base = baseOf(agent);
      // Over HTTP a note is forgotten by memory_forget's `note` form.
      return verb === 'note_forget'
        ? adminCall(node, admin, 'POST', `${base}/forget`, { note: body, user_id: user, scope })
        : verb === 'export' || verb === 'status'
          ? adminCall(node, admin, 'POST', `/v1/memory/${verb}`, { ...body, user_id: user, scope })
          : adminCall(node, admin, 'POST', `${base}/${verb}`, { ...body, user_id: user, scope });
    }, node);
  }
  const store = await openStore(a.dataDir);
  const caller: Caller = { tenant: 'local', user, scope, agent: a.agent ?? CLI_AGENT };
  try {
    return await fn(async (verb, body, agent) => {
      const as = agent === undefined ? caller : { ...caller, agent };
      // The operator owns the store: private notes, and every agent's, are theirs to see.
      const reply =
        verb === 'export'
          ? await store.knowledge('export', as, { ...body, allowPrivate: true, allAgents: true })
          : verb === 'status'
            ? await store.knowledge('status', as, body)
            : await store.notes(verb, as, { ...body, allowPrivate: true });
      if (reply.error !== undefined) throw refusedBy(reply);
      return reply;
    }, null);
  } finally {
    await store.close();
  }
}
