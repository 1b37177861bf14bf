import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { agentClients, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by a review of history as a model uses it: a key held by a user note and by a task note
// (or the agent's own agent note) answered `memory_history {key}` with the user note's events
// alone, as if the key had no other note. The key alone now names the user note only when it is
// the one note there; beside others the call is refused naming each, to send back.

let t: TestNode;
let a: Client;
let b: Client;

beforeAll(async () => {
  t = await startTestNode();
  [a, b] = await agentClients(t, 'ann', ['claude', 'codex'] as const);
});
afterAll(async () => {
  for (const c of [a, b]) await c.close();
  await t.stop();
});

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name, arguments: args }));
}

type Event = { op: string; target: { key: string; visibility: string; taskId?: string } };
type Refusal = { error: { code: string; message: string; details: { field: string; note: object }[] } };

it('a key alone names the user note while it is the only note there', async () => {
  const write = { key: 'db_choice', kind: 'decision', value: { choice: 'postgres' } };
  expect((await call(a, 'memory_note_write', write)).isError).toBe(false);
  const h = await call(b, 'memory_history', { key: 'db_choice' });
  expect(h.isError).toBe(false);
  expect((h.body.events as Event[]).map((e) => [e.op, e.target])).toEqual([
    ['create', { key: 'db_choice', visibility: 'user' }],
  ]);
});

it('beside a task note and an agent note the key alone is refused naming each; each sent back reads its own', async () => {
  const base = { key: 'db_choice', kind: 'decision' };
  expect((await call(a, 'memory_note_write', { ...base, taskId: 'atlas', value: 'sqlite' })).isError).toBe(false);
  expect((await call(a, 'memory_note_write', { ...base, visibility: 'agent', value: 'duckdb' })).isError).toBe(false);
  const before = await t.txn();
  const refused = await call(a, 'memory_history', { key: 'db_choice' });
  expect(refused.isError).toBe(true);
  const { error } = refused.body as Refusal;
  expect(error.code).toBe('VALIDATION_ERROR');
  expect(error.message).toMatch(/^visibility: key "db_choice" names 3 notes \(the user note, the agent note, /);
  expect(error.details).toEqual([
    { field: 'visibility', note: { key: 'db_choice', visibility: 'user' } },
    { field: 'visibility', note: { key: 'db_choice', visibility: 'agent' } },
    { field: 'visibility', note: { key: 'db_choice', visibility: 'task', taskId: 'atlas' } },
  ]);
  expect(await t.txn()).toBe(before);
  for (const { note } of error.details) {
    const h = await call(a, 'memory_history', note as Record<string, unknown>);
    expect(h.isError).toBe(false);
    expect((h.body.events as Event[]).map((e) => [e.op, e.target])).toEqual([['create', note]]);
  }
  // Another agent is not told of claude's agent note: for it the key names two notes.
  const other = await call(b, 'memory_history', { key: 'db_choice' });
  expect((other.body as Refusal).error.details.map((d) => d.note)).toEqual([
    { key: 'db_choice', visibility: 'user' },
    { key: 'db_choice', visibility: 'task', taskId: 'atlas' },
  ]);
});
