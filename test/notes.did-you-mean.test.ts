import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by a review from a model's side, agent B picking up agent A's task: a note key spelt
// `deploy-window` for `deploy_window`, or a task note named without its `taskId`, was a bare
// NOT_FOUND from memory_history and memory_forget (`details: []`, though the history tool
// promised `did_you_mean`), and a CAS write to it said "the note is at version 0"; a task id
// spelt `atlas_migration` was memory_handoff_resume `state: none`, read as "no one began it".
// Each now names what the model may have meant, from the caller's own user only.

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
    { key: 'deploy_window', value: { day: 'Tuesday' }, kind: 'decision' },
    { key: 'recon_status', value: { failing: 3 }, kind: 'task_state', taskId: 'atlas-migration' },
  ]) {
    expect(
      toolJson(await a.callTool({ name: 'memory_note_write', arguments: { scope: 'atlas', ...args } })).isError,
    ).toBe(false);
  }
  const handoff = { scope: 'atlas', taskId: 'atlas-migration', summary: 'ported the ledger', to: 'codex' };
  expect(toolJson(await a.callTool({ name: 'memory_handoff_create', arguments: handoff })).isError).toBe(false);
});
afterAll(async () => {
  for (const c of [a, b, stranger]) await c.close();
  await t.stop();
});

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name, arguments: { scope: 'atlas', ...args } }));
}

type Refusal = { error: { code: string; message: string; details: unknown[] } };

it('history and forget of a note that is not there name the notes meant, to send back', async () => {
  const before = await t.txn();
  for (const [tool, args] of [
    ['memory_history', { key: 'deploy-window' }],
    ['memory_forget', { note: { key: 'deploy-window' } }],
  ] as const) {
    const { isError, body } = await call(b, tool, args);
    expect(isError).toBe(true);
    const { error } = body as Refusal;
    expect(error.code).toBe('NOT_FOUND');
    expect(error.details).toEqual([
      { did_you_mean: 'deploy_window', note: { key: 'deploy_window', visibility: 'user' } },
    ]);
    expect(error.message).toContain('did you mean "deploy_window" (user)?');
  }
  const task = await call(b, 'memory_history', { key: 'recon_status' });
  expect((task.body as Refusal).error.details).toEqual([
    { did_you_mean: 'recon_status', note: { key: 'recon_status', visibility: 'task', taskId: 'atlas-migration' } },
  ]);
  // Sent back as offered, the note is found.
  const found = await call(b, 'memory_history', { key: 'recon_status', taskId: 'atlas-migration' });
  expect(found.isError).toBe(false);
  expect(await t.txn()).toBe(before);
  // Another user is offered nothing of ann's.
  const theirs = await call(stranger, 'memory_history', { key: 'deploy-window' });
  expect((theirs.body as Refusal).error).toEqual({
    code: 'NOT_FOUND',
    message: 'no note "deploy-window" with user visibility is stored',
    details: [],
  });
});

it('a CAS write to a note that is not there says so rather than "at version 0"', async () => {
  const before = await t.txn();
  const { body } = await call(b, 'memory_note_write', {
    key: 'recon_status',
    value: { failing: 2 },
    expectedVersion: 1,
  });
  expect((body as Refusal).error).toEqual({
    code: 'VERSION_CONFLICT',
    message: 'expectedVersion 1 but no note "recon_status" with user visibility is stored (version 0)',
    details: [{ currentVersion: 0 }],
  });
  expect(await t.txn()).toBe(before);
});

it('resuming a misspelt task names the tasks spelled like it', async () => {
  const miss = await call(b, 'memory_handoff_resume', { taskId: 'atlas_migration' });
  expect(miss).toEqual({
    isError: false,
    body: { state: 'none', taskId: 'atlas_migration', did_you_mean: ['atlas-migration'] },
  });
  expect((await call(b, 'memory_handoff_resume', { taskId: 'atlas-migration' })).body.state).toBe('resumed');
  expect((await call(stranger, 'memory_handoff_resume', { taskId: 'atlas_migration' })).body).toEqual({
    state: 'none',
    taskId: 'atlas_migration',
  });
});
