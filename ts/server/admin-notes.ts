import type { FastifyInstance } from 'fastify';

import type { Tokens } from '../auth/tokens.js';
import { AgentName, AS_AGENT_VERBS } from '../protocol/admin.js';
import { ApiError } from '../protocol/errors.js';
import type { Service } from '../service/context.js';
import type { Principal } from '../service/identity.js';
import { audit, memoryForget, memoryHistory, memoryNoteList } from '../service/memory.js';
import { adminHook, principalOf } from './auth.js';

const SERVICE = { note_list: memoryNoteList, history: memoryHistory, forget: memoryForget, audit };

/** The admin principal with `agent` in place of its own: identity, scopes and policy unchanged. */
function actingAs(p: Principal, agent: string): Principal {
  const name = AgentName.safeParse(agent);
  if (!name.success) {
    const message = name.error.issues[0]?.message ?? 'invalid';
    throw new ApiError('VALIDATION_ERROR', `agent: ${message}`, [{ field: 'agent', message }]);
  }
  return { ...p, token: { ...p.token, agent: name.data } };
}

/**
 * `POST /v1/admin/agents/{agent}/memory/{note_list|history|forget|audit}` (admin token only; any
 * other token is FORBIDDEN before the body is read): the verb, with its own body, run as `agent`,
 * so the operator reaches that agent's agent-visibility notes as `cairn memories … --agent NAME`
 * does on the store directly (DESIGN.md §4: the CLI goes through a running node), and reads what
 * that agent wrote (`audit`: who did what, one agent at a time). Only note operations and the
 * audit: history of a note (`key`) and forget of a note (`note`); the events record `agent` as the
 * actor, as they do on the store.
 */
export function registerAdminNoteRoutes(app: FastifyInstance, tokens: Tokens, svc: Service) {
  const admin = { onRequest: adminHook(tokens) };
  for (const { verb, needs } of AS_AGENT_VERBS) {
    const run = SERVICE[verb];
    app.post<{ Params: { agent: string } }>(`/v1/admin/agents/:agent/memory/${verb}`, admin, async (req) => {
      const p = actingAs(principalOf(req), req.params.agent);
      const body = req.body ?? {};
      if (needs !== null && (typeof body !== 'object' || !(needs in body))) {
        const message = `is required: as another agent, ${verb} reaches notes only`;
        throw new ApiError('VALIDATION_ERROR', `${needs}: ${message}`, [{ field: needs, message }]);
      }
      return run(svc, p, body);
    });
  }
}
