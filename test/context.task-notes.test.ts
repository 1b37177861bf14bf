import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Found by a review: agent B asked memory_context "what is the plan step" and was told
// `nothing_stored`, though its user's task note `task.plan` (task T1) matched: a read without the
// task's id does not see its notes, and nothing said they were there. memory_note_list named
// them already; memory_context now does too, never another user's and never a private one. And a
// task-note list without a taskId, refused, names the tasks holding notes.

let t: TestNode;
let codex: string;
let other: string;
beforeAll(async () => {
  t = await startTestNode({ allowPrivate: true });
  const claude = (await t.token({ agent: 'claude', user: 'u1' })).token;
  codex = (await t.token({ agent: 'codex', user: 'u1' })).token;
  other = (await t.token({ agent: 'claude', user: 'u2' })).token;
  const write = async (body: object) => {
    const r = await t.call('POST', '/v1/memory/note_write', { token: claude, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  await write({
    key: 'task.plan',
    value: 'plan step: migrate the billing tables',
    kind: 'task_state',
    visibility: 'task',
    taskId: 'T1',
  });
  await write({
    key: 'task.secret',
    value: 'plan step: rotate the vault keys',
    kind: 'task_state',
    visibility: 'task',
    taskId: 'T9',
    private: true,
  });
});
afterAll(() => t.stop());

const context = (token: string, body: object) => t.call('POST', '/v1/memory/context', { token, body });

it('nothing stored that answers, but a task note matches: the reply names it and its taskId', async () => {
  const r = await context(codex, { question: 'what is the plan step' });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ state: 'nothing_stored' });
  const offered = (r.body as { task_notes?: { notes: unknown[]; hint: string } }).task_notes;
  expect(offered?.notes).toEqual([{ key: 'task.plan', visibility: 'task', taskId: 'T1' }]);
  expect(offered?.hint).toContain('taskId');
  // Sent with it, the note answers.
  const asked = await context(codex, { question: 'what is the plan step', taskId: 'T1' });
  expect(asked.body).toMatchObject({ state: 'answered' });
  expect(JSON.stringify(asked.body)).toContain('migrate the billing tables');
  expect((asked.body as { task_notes?: unknown }).task_notes).toBeUndefined();
});

it('another user is offered nothing of them', async () => {
  const r = await context(other, { question: 'what is the plan step' });
  expect(r.body).toMatchObject({ state: 'nothing_stored' });
  expect((r.body as { task_notes?: unknown }).task_notes).toBeUndefined();
  expect(JSON.stringify(r.body)).not.toContain('task.');
});

it('a question no task note matches gets no offer', async () => {
  const r = await context(codex, { question: 'who founded the lighthouse' });
  expect(r.body).toMatchObject({ state: 'nothing_stored' });
  expect((r.body as { task_notes?: unknown }).task_notes).toBeUndefined();
});

it('a task-note list without taskId is refused naming the tasks holding notes, never by a private note', async () => {
  const list = (token: string) => t.call('POST', '/v1/memory/note_list', { token, body: { visibility: 'task' } });
  const r = await list(codex);
  expect(r.status).toBe(422);
  const error = (r.body as { error: { message: string; details: { field: string; tasks?: unknown }[] } }).error;
  expect(error.message).toBe(
    'taskId: is required to list task notes; tasks holding notes here: "T1" (1) (send one as taskId)',
  );
  expect(error.details).toEqual([
    { field: 'taskId', message: error.message.slice('taskId: '.length), tasks: [{ taskId: 'T1', notes: 1 }] },
  ]);
  const theirs = await list(other);
  expect(theirs.status).toBe(422);
  expect(JSON.stringify(theirs.body)).not.toContain('T1');
  expect((theirs.body as { error: { message: string } }).error.message).toBe('taskId: is required to list task notes');
});
