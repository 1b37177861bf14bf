import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { agentClients, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found playing two coding agents on one task over MCP: agent B handed the task off without
// resuming it, and its capsule took the place of agent A's, addressed to codex with the steps
// left, in every resume; B's receipt said only its new id. The receipt now names the capsule a
// resume returned until then.

let t: TestNode;
let a: Client;
let b: Client;

beforeAll(async () => {
  t = await startTestNode();
  [a, b] = await agentClients(t, 'ann', ['claude', 'cursor']);
});
afterAll(async () => {
  for (const c of [a, b]) await c.close();
  await t.stop();
});

async function create(client: Client, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name: 'memory_handoff_create', arguments: args }));
}

it("a create names the capsule it put out of a resume's reach, and a retry replays the same", async () => {
  const first = await create(a, { taskId: 'atlas', summary: 'schema done', nextSteps: ['cutover'], to: 'codex' });
  expect(first.body).not.toHaveProperty('replaces');
  const args = { taskId: 'atlas', summary: 'docs updated', idempotencyKey: 'h1' };
  const second = await create(b, args);
  expect(second.body.replaces).toEqual({
    id: first.body.id,
    from: 'claude',
    createdAt: first.body.createdAt,
    to: 'codex',
  });
  const resumed = toolJson(await b.callTool({ name: 'memory_handoff_resume', arguments: { taskId: 'atlas' } }));
  expect((resumed.body.handoff as { id: string }).id).toBe(second.body.id);
  expect((await create(b, args)).body).toEqual({ ...second.body, replayed: true });
  // Another task's capsules are not named.
  expect((await create(b, { taskId: 'atlas-2', summary: 'new' })).body).not.toHaveProperty('replaces');
});

it('an expired capsule, which no resume returns, is not named', async () => {
  const expires = Date.now() + 3000;
  const made = await create(a, { taskId: 'beta', summary: 'short-lived', expiresAt: new Date(expires).toISOString() });
  expect(made.isError).toBe(false);
  await new Promise((r) => setTimeout(r, expires + 100 - Date.now()));
  expect((await create(b, { taskId: 'beta', summary: 'later' })).body).not.toHaveProperty('replaces');
});
