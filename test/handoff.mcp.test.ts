import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Two real MCP clients (the official SDK over Streamable HTTP) with different tokens: agent A
// writes a note and a handoff and closes its client; agent B, another token, resumes the task.

let t: TestNode;
let tokenA: string;
let tokenB: string;

beforeAll(async () => {
  t = await startTestNode();
  tokenA = (await t.token({ agent: 'claude', user: 'ana' })).token;
  tokenB = (await t.token({ agent: 'codex', user: 'ana' })).token;
});
afterAll(async () => t.stop());

async function tool(client: Awaited<ReturnType<typeof mcpClient>>, name: string, args: object) {
  return toolJson(await client.callTool({ name, arguments: args as Record<string, unknown> }));
}

describe('handoff between two MCP clients with different tokens', () => {
  it('A writes a note and a handoff and exits; B resumes by task and by address', async () => {
    const a = await mcpClient(t.url, tokenA);
    const note = await tool(a, 'memory_note_write', {
      key: 'release-plan',
      value: { target: 'v2.1', freeze: 'friday' },
      kind: 'task_state',
      visibility: 'task',
      taskId: 'REL-7',
    });
    expect(note.isError).toBe(false);
    expect(note.body).toMatchObject({ version: 1, evolution: 'created', visibility: 'task', taskId: 'REL-7' });
    const made = await tool(a, 'memory_handoff_create', {
      taskId: 'REL-7',
      summary: 'Changelog drafted; tagging is left',
      status: 'in_progress',
      nextSteps: ['tag v2.1', 'publish notes'],
      decisions: ['ship without the beta flag'],
      to: 'codex',
    });
    expect(made.isError).toBe(false);
    await a.close();

    const b = await mcpClient(t.url, tokenB);
    try {
      const resumed = await tool(b, 'memory_handoff_resume', { taskId: 'REL-7' });
      expect(resumed.isError).toBe(false);
      expect(resumed.body.state).toBe('resumed');
      const handoff = resumed.body.handoff as Record<string, unknown>;
      expect(handoff).toMatchObject({
        summary: 'Changelog drafted; tagging is left',
        nextSteps: ['tag v2.1', 'publish notes'],
      });
      expect(JSON.stringify(handoff)).toContain('claude');
      // Without taskId: the capsules addressed to the caller.
      const mine = await tool(b, 'memory_handoff_resume', {});
      expect(mine.body.state).toBe('listed');
      expect((mine.body.handoffs as { taskId: string }[]).map((h) => h.taskId)).toEqual(['REL-7']);
      // B sees the task note with the task id, and can continue it with CAS.
      const notes = await tool(b, 'memory_note_list', { taskId: 'REL-7', visibility: 'task' });
      expect((notes.body.notes as { key: string; agent: string }[]).map((n) => [n.key, n.agent])).toEqual([
        ['release-plan', 'claude'],
      ]);
      const next = await tool(b, 'memory_note_write', {
        key: 'release-plan',
        value: { tagged: true },
        writeMode: 'merge',
        visibility: 'task',
        taskId: 'REL-7',
        expectedVersion: 1,
      });
      expect(next.body).toMatchObject({ version: 2, evolution: 'merged', supersedes: 1 });
      const history = await tool(b, 'memory_history', { key: 'release-plan', visibility: 'task', taskId: 'REL-7' });
      expect((history.body.events as { agent: string; op: string }[]).map((e) => [e.agent, e.op])).toEqual([
        ['claude', 'create'],
        ['codex', 'merge'],
      ]);
    } finally {
      await b.close();
    }
  });

  it('a handoff addressed to someone else is not listed for B; another user cannot resume it', async () => {
    const a = await mcpClient(t.url, tokenA);
    await tool(a, 'memory_handoff_create', { taskId: 'OPS-1', summary: 'for gemini', to: 'gemini' });
    await a.close();
    const b = await mcpClient(t.url, tokenB);
    try {
      const mine = await tool(b, 'memory_handoff_resume', {});
      expect((mine.body.handoffs as { taskId: string }[]).map((h) => h.taskId)).not.toContain('OPS-1');
    } finally {
      await b.close();
    }
    const stranger = await mcpClient(t.url, (await t.token({ agent: 'codex', user: 'bob' })).token);
    try {
      const r = await tool(stranger, 'memory_handoff_resume', { taskId: 'REL-7' });
      expect(r.body.state).toBe('none');
      expect(JSON.stringify(r.body)).not.toContain('Changelog');
    } finally {
      await stranger.close();
    }
  });

  it('an expired capsule is not returned, and the reply says so', async () => {
    const a = await mcpClient(t.url, tokenA);
    const expiresAt = new Date(Date.now() + 1200).toISOString();
    const made = await tool(a, 'memory_handoff_create', { taskId: 'TMP-1', summary: 'short-lived', expiresAt });
    expect(made.isError).toBe(false);
    await a.close();
    await new Promise((r) => setTimeout(r, 1500));
    const b = await mcpClient(t.url, tokenB);
    try {
      const r = await tool(b, 'memory_handoff_resume', { taskId: 'TMP-1' });
      expect(r.body.state).toBe('expired');
      expect(JSON.stringify(r.body)).not.toContain('short-lived');
    } finally {
      await b.close();
    }
  });

  it('a create retried with its idempotencyKey replays the first receipt, marked replayed, one capsule', async () => {
    const a = await mcpClient(t.url, tokenA);
    const b = await mcpClient(t.url, tokenB);
    try {
      const args = { taskId: 'RETRY-1', summary: 'sent twice', to: 'codex', idempotencyKey: 'retry-1' };
      const first = await tool(a, 'memory_handoff_create', args);
      expect(first.isError).toBe(false);
      expect(first.body.replayed).toBeUndefined();
      const retry = await tool(a, 'memory_handoff_create', args);
      expect(retry.body).toEqual({ ...first.body, replayed: true });
      const mine = await tool(b, 'memory_handoff_resume', { limit: 100 });
      const listed = (mine.body.handoffs as { taskId: string }[]).filter((h) => h.taskId === 'RETRY-1');
      expect(listed).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('takes a list sent as null as absent (a client that sends null for "none")', async () => {
    const a = await mcpClient(t.url, tokenA);
    try {
      const made = await tool(a, 'memory_handoff_create', { taskId: 'NULL-1', summary: 's', decisions: null });
      expect(made.isError, JSON.stringify(made.body)).toBe(false);
      const resumed = await tool(a, 'memory_handoff_resume', { taskId: 'NULL-1' });
      expect(resumed.body.handoff).toMatchObject({ summary: 's', decisions: [] });
    } finally {
      await a.close();
    }
  });

  it('takes an expiry given as a date alone, as its first instant (UTC)', async () => {
    const a = await mcpClient(t.url, tokenA);
    try {
      const made = await tool(a, 'memory_handoff_create', {
        taskId: 'DAY-1',
        summary: 'until then',
        expiresAt: '2099-01-01',
      });
      expect(made.isError).toBe(false);
      expect(made.body.expiresAt).toBe('2099-01-01T00:00:00.000Z');
    } finally {
      await a.close();
    }
  });

  it("memory_forget {handoff: {taskId}} takes a task's capsules, and only that task's (the audit)", async () => {
    const a = await mcpClient(t.url, tokenA);
    try {
      await tool(a, 'memory_handoff_create', { taskId: 'SEC-1', summary: 'api key sk-live-123', to: 'codex' });
      await tool(a, 'memory_handoff_create', { taskId: 'SEC-2', summary: 'unrelated' });
    } finally {
      await a.close();
    }
    const b = await mcpClient(t.url, tokenB);
    try {
      const gone = await tool(b, 'memory_forget', { handoff: { taskId: 'SEC-1' } });
      expect(gone.isError).toBe(false);
      expect(gone.body).toMatchObject({ state: 'forgotten', handoff: { taskId: 'SEC-1', capsules: 1 } });
      expect((await tool(b, 'memory_handoff_resume', { taskId: 'SEC-1' })).body.state).toBe('none');
      expect((await tool(b, 'memory_handoff_resume', { taskId: 'SEC-2' })).body.state).toBe('resumed');
      const again = await tool(b, 'memory_forget', { handoff: { taskId: 'SEC-1' } });
      expect(again.body.state).toBe('already_forgotten');
      const exported = await tool(b, 'memory_export', {});
      expect(JSON.stringify(exported.body)).not.toContain('sk-live-123');
      const bad = await tool(b, 'memory_forget', { handoff: { taskId: 'SEC-3', limit: 1 } });
      expect(bad.isError).toBe(true);
    } finally {
      await b.close();
    }
  });
});
