import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Refusals that tell a model how to fix its call (found by an audit): remember's spelling of
// relation ends sent to forget, turns with nothing said, and blank names blamed on their length.

let t: TestNode;
let token: string;
const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { token, body });

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const r = await post('relate', { from: 'Priya Raman', to: 'Acme', type: 'works_at' });
  expect(r.status).toBe(200);
});
afterAll(async () => t.stop());

it('a fact spelled {source, target, type} is refused naming the {from, to, type} form, nothing forgotten', async () => {
  const fact = { source: 'Priya Raman', target: 'Acme', type: 'works_at' };
  for (const verb of ['forget', 'history']) {
    const before = await t.txn();
    const r = await post(verb, { fact });
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'fact' }] });
    expect(r.body.error?.message).toContain('{from, to, type}');
    expect(await t.txn()).toBe(before);
  }
  const recall = await post('recall', { subject: 'Priya Raman' });
  expect(JSON.stringify(recall.body.facts)).toContain('works_at');
});

it('messages whose every turn is blank are refused as blank content is, and nothing is stored', async () => {
  const before = await t.txn();
  const messages = [
    { role: 'user', content: '' },
    { role: 'assistant', content: '  ' },
  ];
  const r = await post('remember', { messages });
  expect(r.status).toBe(422);
  expect(r.body.error?.message).toMatch(/messages must not be blank/);
  expect(await t.txn()).toBe(before);
  // One turn that says something is enough.
  const ok = await post('remember', { messages: [...messages, { role: 'user', content: 'Acme ships on Fridays.' }] });
  expect(ok.status).toBe(200);
});

it('a blank name is refused as blank, not for its length (over MCP too)', async () => {
  const recall = await post('recall', { subject: '   ' });
  expect(recall.status).toBe(422);
  expect(recall.body.error?.message).toBe('subject: must not be blank');
  const relate = await post('relate', { from: ' ', to: 'Acme', type: 'works_at' });
  expect(relate.status).toBe(422);
  expect(relate.body.error?.message).toBe('from: must not be blank');
  const client = await mcpClient(t.url, token);
  try {
    const res = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: '\t' } }));
    expect(res.isError).toBe(true);
    expect(JSON.stringify(res.body)).toContain('must not be blank');
    expect(JSON.stringify(res.body)).not.toMatch(/bytes/);
  } finally {
    await client.close();
  }
});

it('an empty name, text or scope is one issue, "must not be empty", never zod\'s words (new-user audit)', async () => {
  // Before: "Too small: expected string to have >=1 characters", and beside it one or two
  // "must not be blank" for the same field (a task id was checked for blankness twice).
  const cases: [string, object, string][] = [
    ['recall', { subject: '' }, 'subject'],
    ['context', { question: '' }, 'question'],
    ['remember', { content: '' }, 'content'],
    ['handoff_resume', { taskId: '' }, 'taskId'],
    ['note_list', { scope: '' }, 'scope'],
  ];
  for (const [verb, body, field] of cases) {
    const r = await post(verb, body);
    expect(r.status, verb).toBe(422);
    expect(r.body.error, verb).toEqual({
      code: 'VALIDATION_ERROR',
      message: `${field}: must not be empty`,
      details: [{ field, message: 'must not be empty' }],
    });
  }
  const blank = await post('handoff_resume', { taskId: '  ' });
  expect(blank.body.error?.details).toEqual([{ field: 'taskId', message: 'must not be blank' }]);
});
