import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by playing a model, agent B picking up agent A's task: A kept the task state as a task
// note; B listed it by key (`{key: "migration-state"}`) or searched for it (`{query: "migration
// backfill"}`) without the `taskId`, got `notes: []` and read it as "nothing stored", while
// memory_history of the same key named the note. An empty first page now names the notes it may
// have meant, to send back; never another user's, a private one, or another agent's own.

let t: TestNode;
let a: Client;
let b: Client;
let stranger: Client;

beforeAll(async () => {
  t = await startTestNode();
  a = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'ann' })).token);
  b = await mcpClient(t.url, (await t.token({ agent: 'codex', user: 'ann' })).token);
  stranger = await mcpClient(t.url, (await t.token({ agent: 'codex', user: 'bob' })).token);
  for (const args of [
    { key: 'migration-state', kind: 'task_state', taskId: 'T-42', value: { step: 'backfill', table: 'ledger' } },
    { key: 'migration-notes', kind: 'decision', visibility: 'agent', value: 'backfill the ledger at night' },
  ]) {
    expect((await call(a, 'memory_note_write', args)).isError).toBe(false);
  }
});
afterAll(async () => {
  for (const c of [a, b, stranger]) await c.close();
  await t.stop();
});

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name, arguments: { scope: 'atlas', ...args } }));
}

it('a key listed without its taskId names the task note, which sent back is listed', async () => {
  const before = await t.txn();
  for (const key of ['migration-state', 'migration_state']) {
    expect((await call(b, 'memory_note_list', { key })).body).toEqual({
      notes: [],
      nextCursor: null,
      did_you_mean: [{ key: 'migration-state', visibility: 'task', taskId: 'T-42' }],
    });
  }
  const again = await call(b, 'memory_note_list', { key: 'migration-state', taskId: 'T-42' });
  expect((again.body.notes as { value: unknown }[])[0]?.value).toEqual({ step: 'backfill', table: 'ledger' });
  expect(again.body.did_you_mean).toBeUndefined();
  expect(await t.txn()).toBe(before);
});

it("a query matching only task notes names them; not another agent's own, not another user", async () => {
  const listed = await call(b, 'memory_note_list', { query: 'migration backfill' });
  expect(listed.body).toEqual({
    notes: [],
    nextCursor: null,
    did_you_mean: [{ key: 'migration-state', visibility: 'task', taskId: 'T-42' }],
  });
  // A query that finds nothing anywhere names nothing.
  expect((await call(b, 'memory_note_list', { query: 'kubernetes' })).body).toEqual({ notes: [], nextCursor: null });
  for (const args of [{ key: 'migration-state' }, { query: 'migration backfill' }]) {
    expect((await call(stranger, 'memory_note_list', args)).body).toEqual({ notes: [], nextCursor: null });
  }
});

it('memory_context does not name task notes: it lists notes only to rank them', async () => {
  const { body } = await call(b, 'memory_context', { question: 'What is the migration backfill step?' });
  expect(JSON.stringify(body)).not.toContain('did_you_mean');
});
