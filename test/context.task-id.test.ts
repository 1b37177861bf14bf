import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found playing two agents on one node: claude kept task AUTH-12's state in a task note; codex,
// picking the task up, asked memory_context "What is left on AUTH-12?" with `taskId: AUTH-12`
// and was told `nothing_stored`, and memory_query's step for it the same: a note was found only
// by its key and value, never by the task it belongs to. A task note is now found by its task
// id too, and its task id covers the question's word.

let t: TestNode;
let claude: string;
let codex: string;
beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ann' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
  const r = await t.call('POST', '/v1/memory/note_write', {
    token: claude,
    body: {
      key: 'progress',
      value: { done: ['schema', 'tests'], next: 'migration 0042' },
      kind: 'task_state',
      taskId: 'AUTH-12',
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
});
afterAll(() => t.stop());

it("memory_context with the task's id finds the task's notes when the question names the task", async () => {
  const b = await mcpClient(t.url, codex);
  try {
    const r = toolJson(
      await b.callTool({
        name: 'memory_context',
        arguments: { question: 'What is left on AUTH-12?', taskId: 'AUTH-12', purpose: 'coding', tokenBudget: 300 },
      }),
    );
    expect(r.isError).toBe(false);
    expect(r.body.state).toBe('answered');
    const items = r.body.items as { kind: string; note?: { key: string; taskId?: string }; uncovered?: string[] }[];
    expect(items[0]?.note).toMatchObject({ key: 'progress', taskId: 'AUTH-12' });
    // The task id covers the question's "AUTH-12"; only "left" is the model's to judge.
    expect(items[0]?.uncovered).toEqual(['left']);
    expect(r.body.context).toContain('migration 0042');

    // Without the taskId the task's notes are not read, but named to send back.
    const unnamed = toolJson(
      await b.callTool({ name: 'memory_context', arguments: { question: 'What is left on AUTH-12?' } }),
    );
    expect(unnamed.body.state).toBe('nothing_stored');
    expect(unnamed.body.task_notes).toMatchObject({ notes: [{ key: 'progress', taskId: 'AUTH-12' }] });

    const q = toolJson(
      await b.callTool({
        name: 'memory_query',
        arguments: { query: 'What did we finish, and what is left on AUTH-12?', taskId: 'AUTH-12' },
      }),
    );
    const steps = q.body.steps as { question: string; items: number }[];
    expect(steps.find((s) => s.question.includes('AUTH-12'))?.items).toBeGreaterThan(0);
  } finally {
    await b.close();
  }
});
