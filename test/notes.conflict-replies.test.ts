import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { agentClients, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found playing two coding agents on one task over MCP: agent A's late compare-and-set write got
// "expectedVersion 2 but the note is at version 3" and nothing more, so a model retried with
// version 3 unread and overwrote agent B's write, the lost update the check exists to stop. A write retried with its idempotencyKey but a changed
// body got "was used with a different request", and the model could not tell whether its first
// request had written anything. Each refusal now says what happened and what to do next.

let t: TestNode;
let a: Client;
let b: Client;

beforeAll(async () => {
  t = await startTestNode();
  [a, b] = await agentClients(t, 'ann', ['claude', 'codex']);
});
afterAll(async () => {
  for (const c of [a, b]) await c.close();
  await t.stop();
});

async function write(client: Client, args: Record<string, unknown>) {
  const base = { key: 'migration', taskId: 'atlas', writeMode: 'merge' };
  return toolJson(await client.callTool({ name: 'memory_note_write', arguments: { ...base, ...args } }));
}

type Refusal = { error: { code: string; message: string; details: Record<string, unknown>[] } };

it('a VERSION_CONFLICT names who wrote the current version and says to read it before retrying', async () => {
  expect((await write(a, { kind: 'task_state', value: { step: 1 }, expectedVersion: 0 })).isError).toBe(false);
  expect((await write(a, { value: { step: 2 }, expectedVersion: 1 })).isError).toBe(false);
  expect((await write(b, { value: { step: 3, todo: ['cutover'] }, expectedVersion: 2 })).isError).toBe(false);
  const late = await write(a, { value: { step: 99 }, expectedVersion: 2 });
  expect(late.isError).toBe(true);
  const { error } = late.body as Refusal;
  expect(error.code).toBe('VERSION_CONFLICT');
  expect(error.details).toEqual([{ currentVersion: 3, agent: 'codex', updatedAt: expect.any(String) }]);
  expect(error.message).toContain('written by "codex"');
  expect(error.message).toMatch(/read it .* apply your change to what it holds now, then send expectedVersion 3/);
  // Nothing was written by the refused call: codex's version stands.
  const listed = toolJson(
    await b.callTool({ name: 'memory_note_list', arguments: { key: 'migration', taskId: 'atlas' } }),
  );
  expect(listed.body.notes).toEqual([expect.objectContaining({ version: 3, value: { step: 3, todo: ['cutover'] } })]);
});

it('an IDEMPOTENCY_CONFLICT says what the first request wrote, and that this one wrote nothing', async () => {
  const first = await write(a, {
    key: 'plan',
    taskId: 'atlas',
    kind: 'decision',
    value: { db: 'pg' },
    idempotencyKey: 'k1',
  });
  expect(first.body).toMatchObject({ version: 1, evolution: 'created' });
  const changed = await write(a, { key: 'plan', taskId: 'atlas', value: { db: 'mysql' }, idempotencyKey: 'k1' });
  expect(changed.isError).toBe(true);
  const { error } = changed.body as Refusal;
  expect(error.code).toBe('IDEMPOTENCY_CONFLICT');
  expect(error.message).toContain('which wrote version 1 of note "plan"');
  expect(error.message).toContain('this one wrote nothing: send it with a new idempotencyKey');
  expect(error.details).toEqual([
    { field: 'idempotencyKey', receipt: expect.objectContaining({ key: 'plan', version: 1 }) },
  ]);
  // A handoff's key reused for a note names the handoff it wrote.
  const handoff = { taskId: 'atlas', summary: 'schema done', idempotencyKey: 'h1' };
  const made = toolJson(await b.callTool({ name: 'memory_handoff_create', arguments: handoff }));
  const reused = await write(b, { key: 'other', kind: 'task_state', value: 1, idempotencyKey: 'h1' });
  expect((reused.body as Refusal).error.message).toContain(`which wrote handoff ${made.body.id} on task "atlas"`);
  const plan = toolJson(await a.callTool({ name: 'memory_note_list', arguments: { key: 'plan', taskId: 'atlas' } }));
  expect(plan.body.notes).toEqual([expect.objectContaining({ version: 1, value: { db: 'pg' } })]);
});
