import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found playing two coding agents on one task over MCP: agent A keeps the task state as a task
// note (`taskId: atlas`) and later updates it without the taskId. Sent without `kind`, the update
// was refused "kind: is required when creating a note" and the model added a kind; sent with one
// (as a model does on every write), it created a second, user-visible note `migration` and left
// the task note, which agent B resumes from, stale, with a receipt that only said `created`.
// The refusal now names the notes meant, and the receipt warns of the notes beside it.

let t: TestNode;
let a: Client;
let b: Client;
let stranger: Client;

beforeAll(async () => {
  t = await startTestNode({ allowPrivate: true });
  a = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'ann' })).token);
  b = await mcpClient(t.url, (await t.token({ agent: 'codex', user: 'ann' })).token);
  stranger = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'bob' })).token);
  const task = { key: 'migration', taskId: 'atlas', kind: 'task_state', value: { step: 2 } };
  expect(toolJson(await a.callTool({ name: 'memory_note_write', arguments: task })).isError).toBe(false);
});
afterAll(async () => {
  for (const c of [a, b, stranger]) await c.close();
  await t.stop();
});

async function write(client: Client, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name: 'memory_note_write', arguments: args }));
}

type Refusal = { error: { code: string; message: string; details: Record<string, unknown>[] } };

it('an update without the taskId and without kind names the task note, which sent back is updated', async () => {
  const before = await t.txn();
  const missed = await write(a, { key: 'migration', value: { step: 3 } });
  expect(missed.isError).toBe(true);
  const { error } = missed.body as Refusal;
  expect(error.code).toBe('VALIDATION_ERROR');
  expect(error.message).toMatch(
    /^kind: is required when creating a note: one of [a-z_, ]+; did you mean "migration" \(task "atlas"\)\?/,
  );
  expect(error.details).toEqual([
    { did_you_mean: 'migration', note: { key: 'migration', visibility: 'task', taskId: 'atlas' } },
  ]);
  expect(await t.txn()).toBe(before);
  const sent = await write(a, { ...(error.details[0]?.note as object), value: { step: 3 } });
  expect(sent.body).toMatchObject({ version: 2, evolution: 'replaced', taskId: 'atlas' });
});

it('a create with kind beside a note at the same key says so in the receipt, naming it', async () => {
  const made = await write(b, { key: 'migration', kind: 'task_state', value: { step: 4 } });
  expect(made.isError).toBe(false);
  expect(made.body).toMatchObject({ version: 1, evolution: 'created', visibility: 'user' });
  expect(made.body.warnings).toEqual([
    {
      field: 'key',
      message:
        'created a new user note "migration" beside the task note of task "atlas"; to update one of those ' +
        'instead, send its visibility and taskId',
      notes: [{ key: 'migration', visibility: 'task', taskId: 'atlas' }],
    },
  ]);
  // The next write to the user note replaces it: no warning, the note exists.
  const again = await write(b, { key: 'migration', value: { step: 5 } });
  expect(again.body).toMatchObject({ version: 2, evolution: 'replaced' });
  expect(again.body).not.toHaveProperty('warnings');
});

it("names no private note, no other agent's own note and nothing of another user", async () => {
  await write(a, { key: 'secret', kind: 'user_fact', value: 'x', private: true });
  await write(a, { key: 'scratch', kind: 'task_state', value: 'a', visibility: 'agent' });
  for (const key of ['secret', 'scratch']) {
    const made = await write(b, { key, kind: 'task_state', value: 1, taskId: 'atlas' });
    expect(made.isError).toBe(false);
    expect(made.body).not.toHaveProperty('warnings');
  }
  const other = await write(stranger, { key: 'migration', kind: 'task_state', value: 1 });
  expect(other.body).toMatchObject({ evolution: 'created' });
  expect(other.body).not.toHaveProperty('warnings');
  const refused = await write(stranger, { key: 'migration', taskId: 'atlas', value: 1 });
  expect((refused.body as Refusal).error.details).toEqual([
    { did_you_mean: 'migration', note: { key: 'migration', visibility: 'user' } },
  ]);
});
