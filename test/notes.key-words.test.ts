import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by a review of notes as a model uses them: with the meaning channel off, "what database
// did we choose" missed the decision kept as `db_choice: {"choice": "postgres"}`, since nothing
// of the question is in the note as written. A key's parts now bring the words they abbreviate
// (`db` → database) and camelCase keys split like snake case; a query is never widened.

let t: TestNode;
let a: Client;

async function call(name: string, args: Record<string, unknown>) {
  return toolJson(await a.callTool({ name, arguments: args }));
}

const keys = (body: Record<string, unknown>) => (body.notes as { key: string }[]).map((n) => n.key);

beforeAll(async () => {
  t = await startTestNode();
  a = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'ann' })).token);
  const notes: [string, unknown, string][] = [
    ['db_choice', { choice: 'postgres' }, 'decision'],
    ['deployEnv', 'staging', 'task_state'],
    ['editor.theme', 'dark', 'user_preference'],
    ['lunch', 'we chose the db near the office', 'user_fact'],
  ];
  for (const [key, value, kind] of notes) {
    expect((await call('memory_note_write', { key, value, kind })).isError).toBe(false);
  }
});
afterAll(async () => {
  await a.close();
  await t.stop();
});

it.each([
  ['what database did we choose', 'db_choice'],
  ['which environment do we deploy to', 'deployEnv'],
])('memory_note_list %j finds %s first, by the words its key abbreviates', async (query, key) => {
  const r = await call('memory_note_list', { query });
  expect(r.isError).toBe(false);
  expect(keys(r.body)[0]).toBe(key);
  const first = (r.body.notes as { receipt: { channels: string[] } }[])[0];
  expect(first?.receipt.channels).toContain('token');
});

it('memory_context answers "what database did we choose?" from the db_choice note', async () => {
  const r = await call('memory_context', { question: 'What database did we choose?' });
  expect(r.isError).toBe(false);
  const items = r.body.items as { note?: { key: string } }[];
  expect(items[0]?.note?.key, JSON.stringify(items.map((i) => i.note?.key))).toBe('db_choice');
});

it('a query is not widened: "db" finds the notes that spell it, and "database" not a sentence saying "db"', async () => {
  const db = await call('memory_note_list', { query: 'db' });
  expect(keys(db.body).sort()).toEqual(['db_choice', 'lunch']);
  const database = await call('memory_note_list', { query: 'database' });
  expect(keys(database.body)).toEqual(['db_choice']);
});
