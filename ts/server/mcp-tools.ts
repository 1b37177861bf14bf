import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import type { Role } from '../auth/tokens.js';
import { jsonSchemaOf } from '../protocol/json-schema.js';
import { VERBS } from '../protocol/verbs.js';
import type { Service } from '../service/context.js';
import type { Principal } from '../service/identity.js';
import { SERVICES } from '../service/memory.js';
import { toApiError } from './errors.js';
import { onToolCall, toolResult } from './mcp-call.js';
import { protocolError } from './rpc-error.js';

/**
 * Writes that leave more behind when repeated with the same arguments: another version of the
 * note or capsule (without an `idempotencyKey`), an edge asserted again (it may restore one).
 */
const REPEATS_CHANGE = new Set(['relate', 'note_write', 'handoff_create']);

/** The tools as `tools/list` shows them: one per verb that has a tool name. */
export function toolList() {
  return VERBS.filter((v) => v.tool !== null).map((v) => ({
    name: v.tool as string,
    title: v.title,
    description: v.description,
    inputSchema: jsonSchemaOf(v.input) as { type: 'object'; [k: string]: unknown },
    // No `annotations.title`: it would only repeat `title` (MCP reads either).
    annotations: {
      readOnlyHint: !v.writes,
      destructiveHint: v.verb === 'forget',
      idempotentHint: !REPEATS_CHANGE.has(v.verb),
      openWorldHint: false,
    },
  }));
}

/** What `initialize` tells the model to do with the tools: a read-only token is told only to read. */
const INSTRUCTIONS = {
  full:
    'Cairn is your long-term memory, shared with the other agents of your user. Before answering about people, ' +
    'projects or past decisions, call memory_context (or memory_recall for one entity) and answer only from ' +
    'cited items; store what the user tells you with memory_remember or memory_relate. Keep preferences, facts, ' +
    'task state and decisions as keyed notes (memory_note_write, memory_note_list). Starting a task, call ' +
    'memory_handoff_resume with its taskId, then memory_note_list with that taskId: the task notes may be ' +
    'newer than the capsule. Stopping before it is done, leave memory_handoff_create for the ' +
    'agent that picks it up.',
  reader:
    'Cairn is the long-term memory of the agents of your user; this token reads it and writes nothing. Before ' +
    'answering about people, projects or past decisions, call memory_context (or memory_recall for one entity) ' +
    'and answer only from cited items. Read keyed notes with memory_note_list and what changed with ' +
    'memory_history; memory_handoff_resume with a taskId, then memory_note_list with it, shows where a task stands.',
};

/** The request a tool call came in, as the transport hands it to the handler. */
type CallExtra = { authInfo?: { extra?: Record<string, unknown> } };

/**
 * An MCP server whose tools call the service functions, as the HTTP routes do; `principalOf`
 * gives the principal of the request being handled (from the transport's auth info), and
 * `answered` hears of each call answered without error (the rate limit's refunds). `role` is the
 * role of the token the session belongs to, which chooses the instructions.
 */
export function toolServer(
  svc: Service,
  version: string,
  role: Role,
  principalOf: (extra: CallExtra) => Principal,
  onError: (err: unknown) => void,
  answered: (verb: string, args: Record<string, unknown>, extra: CallExtra) => void = () => undefined,
): Server {
  const server = new Server(
    { name: 'cairn', title: 'Cairn memory', version },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: role === 'reader' ? INSTRUCTIONS.reader : INSTRUCTIONS.full,
    },
  );
  const tools = toolList();
  // A read-only token is offered only the tools it may call (a hidden write tool still answers FORBIDDEN).
  const reads = tools.filter((tool) => tool.annotations.readOnlyHint);
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => ({
    tools: principalOf(extra).token.role === 'reader' ? reads : tools,
  }));
  onToolCall(server, async (call, extra) => {
    const verb = VERBS.find((v) => v.tool === call.name)?.verb;
    const run = verb === undefined ? undefined : SERVICES[verb];
    if (verb === undefined || run === undefined)
      throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${call.name}`);
    try {
      const args = call.arguments ?? {};
      const reply = await run(svc, principalOf(extra), args);
      answered(verb, args, extra);
      return toolResult(reply);
    } catch (err) {
      const api = toApiError(err, onError);
      return toolResult(api.body() as unknown as Record<string, unknown>, true);
    }
  });
  return server;
}
