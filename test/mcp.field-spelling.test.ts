import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The verbs spell fields two ways (`as_of`, `user_id` beside `taskId`, `expectedVersion`) and name
// one thing two ways (relate's `from`/`to`, a remembered relation's `source`/`target`; context's
// `question`, query's `query`). Found by a review from a model's side: the other spelling was
// refused as "unknown field(s): expected_version", and for a relation sent with `from`/`to` the
// message named `source` as missing, leaving the model to guess that `from` was the culprit. The
// refusal names the field meant, first, and nothing is written.

let t: TestNode;
let client: Client;

beforeAll(async () => {
  t = await startTestNode();
  const { token } = await t.token({ agent: 'claude', user: 'ann' });
  client = await mcpClient(t.url, token);
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

async function refusal(name: string, args: Record<string, unknown>) {
  const before = await t.txn();
  const { isError, body } = toolJson(await client.callTool({ name, arguments: args }));
  expect(isError).toBe(true);
  expect(await t.txn()).toBe(before);
  return (body as { error: { code: string; message: string; details: { field: string; message: string }[] } }).error;
}

it.each([
  [
    'memory_note_write',
    { key: 'k', value: 1, kind: 'user_fact', expected_version: 0 },
    'expected_version',
    'expectedVersion',
  ],
  ['memory_note_write', { key: 'k', value: 1, kind: 'task_state', task_id: 'T' }, 'task_id', 'taskId'],
  ['memory_recall', { subject: 'Ann', asOf: '2026-01-01' }, 'asOf', 'as_of'],
  // Found by playing a model: the typo notes.md names as why unknown fields are refused was
  // refused without the field it stood for.
  [
    'memory_note_write',
    { key: 'k', value: 1, kind: 'user_fact', expectedVerison: 0 },
    'expectedVerison',
    'expectedVersion',
  ],
  ['memory_handoff_create', { taskId: 'T', summary: 's', idempotencyKye: 'a' }, 'idempotencyKye', 'idempotencyKey'],
  ['memory_handoff_create', { taskId: 'T', summary: 's', next_steps: ['a'] }, 'next_steps', 'nextSteps'],
  ['memory_document', { name: 'a.txt', contentBase64: 'aGk=' }, 'contentBase64', 'content_base64'],
  ['memory_context', { query: 'who is Ann?' }, 'query', 'question'],
  ['memory_query', { question: 'who is Ann?' }, 'question', 'query'],
  // Found by playing a model: a fact in a recall reply has a `relation` and shows its
  // `valid_from` beside its ends; sent back that way, the refusal named neither `type` nor
  // `attributes`.
  ['memory_relate', { from: 'Ann', to: 'Acme', relation: 'works_at' }, 'relation', 'type'],
  [
    'memory_relate',
    { from: 'Ann', to: 'Acme', type: 'works_at', valid_from: '2024-03-01' },
    'valid_from',
    'attributes.valid_from',
  ],
  [
    'memory_remember',
    { facts: { relations: [{ source: 'Ann', target: 'Acme', type: 'works_at', validTo: '2024-03-01' }] } },
    'facts.relations.0.validTo',
    'attributes.valid_to',
  ],
])('%s: %s names %s as the unknown field and %s as the one meant', async (tool, args, sent, meant) => {
  const error = await refusal(tool, args);
  expect(error.code).toBe('VALIDATION_ERROR');
  const key = sent.split('.').at(-1);
  expect(error.message).toBe(`${sent}: unknown field(s): ${key} (did you mean ${meant}?)`);
  expect(error.details[0]).toEqual({ field: sent, message: error.message.slice(sent.length + 2) });
});

it("names a remembered relation's source and target when sent as relate's from and to", async () => {
  const error = await refusal('memory_remember', {
    facts: { relations: [{ from: 'Ann', to: 'Acme', type: 'works_at' }] },
  });
  expect(error.message).toBe(
    'facts.relations.0.from: unknown field(s): from (did you mean source?), to (did you mean target?)',
  );
});

it('suggests nothing for a field no verb field is spelled like', async () => {
  const error = await refusal('memory_recall', { subject: 'Ann', colour: 'blue' });
  expect(error.message).toBe('colour: unknown field(s): colour');
});

it('a required field left out is refused as required, naming what to send, not as "received undefined"', async () => {
  const error = await refusal('memory_relate', { from: 'Ann', to: 'Acme' });
  expect(error.message).toBe('type: required: a string');
  const query = await refusal('memory_query', { subqueries: ['who is Ann?'] });
  expect(query.details).toEqual([{ field: 'query', message: 'required: a string' }]);
  // A field's own message for it stands.
  const note = await refusal('memory_note_write', { key: 'k' });
  expect(note.message).toBe('value: required: any JSON value but null (use memory_forget to remove)');
});
