import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { INITIALIZE, mcpClient, postMcp, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The official MCP client over Streamable HTTP: tools, every verb's happy path and its errors.

let t: TestNode;
let client: Client;
let token: string;

beforeAll(async () => {
  t = await startTestNode({ sessions: { maxSessions: 64, maxPerToken: 3, idleMs: 60_000 } });
  token = (await t.token({ agent: 'claude' })).token;
  client = await mcpClient(t.url, token, { 'x-cairn-scope': 'mcp-test' });
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

const call = async (name: string, args: Record<string, unknown>) =>
  toolJson(await client.callTool({ name, arguments: args }));

describe('tools', () => {
  it('lists the memory tools with strict input schemas and descriptions', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name)).toEqual([
      'memory_status',
      'memory_remember',
      'memory_document',
      'memory_relate',
      'memory_recall',
      'memory_context',
      'memory_query',
      'memory_forget',
      'memory_export',
      'memory_import',
      'memory_note_write',
      'memory_note_list',
      'memory_history',
      'memory_handoff_create',
      'memory_handoff_resume',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect((tool.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
      expect(tool.description?.length ?? 0).toBeGreaterThan(80);
    }
    expect(tools.find((x) => x.name === 'memory_forget')?.annotations?.destructiveHint).toBe(true);
    expect(tools.find((x) => x.name === 'memory_recall')?.annotations?.readOnlyHint).toBe(true);
    // Repeating these with the same arguments leaves more behind (a version, a capsule, an edge).
    const idempotent = (name: string) => tools.find((x) => x.name === name)?.annotations?.idempotentHint;
    expect(['memory_note_write', 'memory_handoff_create', 'memory_relate'].map(idempotent)).toEqual([
      false,
      false,
      false,
    ]);
    expect(['memory_remember', 'memory_document', 'memory_forget', 'memory_import'].map(idempotent)).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('describes every notes and handoff field a model must understand to use it safely (the audit)', async () => {
    const { tools } = await client.listTools();
    const described = (tool: string, field: string) => {
      const props = tools.find((x) => x.name === tool)?.inputSchema.properties as Record<
        string,
        { description?: string }
      >;
      return props[field]?.description ?? '';
    };
    expect(described('memory_note_write', 'kind')).toMatch(/[Rr]equired when the write creates/);
    expect(described('memory_note_write', 'writeMode')).toMatch(/`null` deletes a key/);
    expect(described('memory_note_write', 'private')).toMatch(/includePrivate/);
    expect(described('memory_note_write', 'idempotencyKey')).toMatch(/per agent.*first receipt/i);
    expect(described('memory_note_list', 'limit')).toMatch(/default 20/);
    expect(described('memory_note_list', 'query')).not.toBe('');
    expect(described('memory_note_list', 'includePrivate')).toMatch(/every agent's/);
    expect(described('memory_context', 'includePrivate')).toMatch(/every agent's/);
    expect(described('memory_handoff_resume', 'limit')).toMatch(/refused with taskId/);
    expect(described('memory_handoff_create', 'expiresAt')).toMatch(/in the future/);
    const write = tools.find((x) => x.name === 'memory_note_write')?.description ?? '';
    expect(write).toMatch(/required when creating/);
    expect(tools.find((x) => x.name === 'memory_forget')?.description).toMatch(/`handoff` \{taskId\}/);
  });

  it('answers ping', async () => {
    await expect(client.ping()).resolves.toBeDefined();
  });

  it('an unknown tool is a protocol error', async () => {
    // The code appears once: the node's message is not already prefixed with it.
    await expect(client.callTool({ name: 'memory_nope', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: Unknown tool: memory_nope$/,
    );
  });
});

describe('tool errors are DESIGN §3 JSON with isError', () => {
  it.each([
    ['memory_recall', { subject: 'x', k: 'many' }, 'k'],
    ['memory_recall', { subject: 'x', bogus: true }, 'bogus'],
    ['memory_forget', { passage: 5 }, 'passage'],
    ['memory_remember', {}, 'content'],
    ['memory_context', { question: 'q', as_of: 'last week' }, 'as_of'],
  ])('%s %j → VALIDATION_ERROR naming %s', async (name, args, field) => {
    const before = await t.txn();
    const r = await call(name, args);
    expect(r.isError).toBe(true);
    const error = r.body.error as { code: string; details: { field: string }[] };
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.details.map((d) => d.field)).toContain(field);
    expect(await t.txn()).toBe(before);
  });
});

describe('verbs (engine replies per DESIGN.md §2)', () => {
  it('memory_status reports health, profile, capabilities and the scope', async () => {
    const r = await call('memory_status', {});
    expect(r.isError).toBe(false);
    expect(r.body).toMatchObject({
      node: { status: 'ok', profile: 'lite' },
      capabilities: { meaning: 'not_armed' },
      identity: { scope: 'mcp-test', agent: 'claude' },
    });
  });

  it('remember → recall → context answer with citations and a grounding verdict', async () => {
    const stored = await call('memory_remember', {
      content: 'Priya Raman works at Acme Robotics. She leads the vision team.',
      facts: {
        entities: [
          { name: 'Priya Raman', type: 'person' },
          { name: 'Acme Robotics', type: 'company' },
        ],
        relations: [{ source: 'Priya Raman', target: 'Acme Robotics', type: 'works_at' }],
      },
      date: '2024-05-01',
      source: 'onboarding notes',
    });
    expect(stored.isError).toBe(false);
    expect(stored.body.stored).toMatchObject({ entities: 2, relations: 1 });
    const again = await call('memory_remember', {
      content: 'Priya Raman works at Acme Robotics. She leads the vision team.',
      date: '2024-05-01',
      source: 'onboarding notes',
    });
    expect(again.body.already).toBe(true);

    const recall = await call('memory_recall', { subject: 'Priya' });
    expect(recall.body.state).toBe('answered');
    const facts = recall.body.facts as { relation: string; object: unknown; citation: unknown; id: unknown }[];
    const works = facts.find((f) => f.relation === 'works_at');
    expect(works).toBeDefined();
    expect(typeof works?.id).toBe('string');
    expect(works?.citation).toBeDefined();

    const ctx = await call('memory_context', { question: 'Where does Priya Raman work?' });
    expect((ctx.body.grounding as { verdict: string }).verdict).toMatch(/grounded|related/);
    expect((ctx.body.items as unknown[]).length).toBeGreaterThan(0);

    const pack = await call('memory_context', {
      question: 'Where does Priya Raman work?',
      tokenBudget: 64,
      purpose: 'coding',
    });
    expect(typeof pack.body.context).toBe('string');
    expect((pack.body.budget as { used: number }).used).toBeLessThanOrEqual(64);
  });

  it('memory_recall of something never stored says nothing_stored', async () => {
    const r = await call('memory_recall', { subject: 'Zebulon Quux' });
    expect(r.isError).toBe(false);
    expect(r.body.state).toBe('nothing_stored');
  });

  it('memory_relate with replaces ends the old edge', async () => {
    await call('memory_relate', { from: 'Sam', to: 'Initech', type: 'works_at' });
    const r = await call('memory_relate', { from: 'Sam', to: 'Globex', type: 'works_at', replaces: true });
    expect(r.isError).toBe(false);
    expect((r.body.ended as unknown[]).length).toBe(1);
  });

  it('memory_export pages and memory_import loads them into another scope', async () => {
    const page = await call('memory_export', { limit: 5000 });
    expect(page.isError).toBe(false);
    const records = page.body.records as Record<string, unknown>[];
    expect(records[0]).toMatchObject({ kind: 'header' });
    expect(page.body.next).toBeNull();
    const imported = await call('memory_import', { scope: 'copy', records });
    expect(imported.isError).toBe(false);
    const twice = await call('memory_import', { scope: 'copy', records });
    expect(twice.body.imported).toMatchObject({ entities: 0 });
  });

  it('memory_forget: forgotten, then already_forgotten; a miss is NOT_FOUND with suggestions', async () => {
    const gone = await call('memory_forget', { subject: 'Sam' });
    expect(gone.isError).toBe(false);
    const again = await call('memory_forget', { subject: 'Sam' });
    expect(again.body.state).toBe('already_forgotten');
    const miss = await call('memory_forget', { subject: 'Priya Ramen' });
    expect(miss.isError).toBe(true);
    expect((miss.body.error as { code: string }).code).toBe('NOT_FOUND');
  });
});

describe('notes and handoffs (notes engine)', () => {
  it('note_write creates, CAS refuses a stale version, idempotent retry returns the same receipt', async () => {
    const first = await call('memory_note_write', {
      key: 'editor',
      value: { theme: 'dark' },
      kind: 'user_preference',
      idempotencyKey: 'k1',
    });
    expect(first.isError).toBe(false);
    expect(first.body).toMatchObject({ key: 'editor', version: 1, evolution: 'created' });
    expect(typeof first.body.id).toBe('string');
    const retry = await call('memory_note_write', {
      key: 'editor',
      value: { theme: 'dark' },
      kind: 'user_preference',
      idempotencyKey: 'k1',
    });
    expect(first.body.replayed).toBeUndefined();
    expect(retry.body).toEqual({ ...first.body, replayed: true });
    const merged = await call('memory_note_write', {
      key: 'editor',
      value: { font: 'mono' },
      writeMode: 'merge',
      expectedVersion: 1,
    });
    expect(merged.body).toMatchObject({ version: 2, evolution: 'merged', supersedes: 1 });
    const stale = await call('memory_note_write', { key: 'editor', value: { x: 1 }, expectedVersion: 1 });
    expect(stale.isError).toBe(true);
    expect((stale.body.error as { code: string }).code).toBe('VERSION_CONFLICT');
    const list = await call('memory_note_list', { key: 'editor' });
    expect((list.body.notes as { value: unknown }[])[0]?.value).toEqual({ theme: 'dark', font: 'mono' });
    const history = await call('memory_history', { key: 'editor' });
    expect((history.body.events as unknown[]).length).toBe(2);
    const gone = await call('memory_forget', { note: { key: 'editor' } });
    expect(gone.body.state).toBe('forgotten');
  });

  it('a handoff written by one agent is resumed by another', async () => {
    const made = await call('memory_handoff_create', { taskId: 'T-1', summary: 'Half done', nextSteps: ['finish'] });
    expect(made.isError).toBe(false);
    const codex = await mcpClient(t.url, (await t.token({ agent: 'codex' })).token, { 'x-cairn-scope': 'mcp-test' });
    try {
      const r = toolJson(await codex.callTool({ name: 'memory_handoff_resume', arguments: { taskId: 'T-1' } }));
      expect(r.body.state).toBe('resumed');
      expect(JSON.stringify(r.body)).toContain('Half done');
    } finally {
      await codex.close();
    }
  });
});

describe('sessions', () => {
  it('a session belongs to the token that opened it', async () => {
    const other = (await t.token({ agent: 'codex' })).token;
    const init = await postMcp(t.url, token, INITIALIZE);
    const sid = init.headers.get('mcp-session-id');
    expect(sid).toBeTruthy();
    const stolen = await fetch(`${t.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(stolen.status).toBe(404);
  });

  it('a token at its share of sessions: its own least recently used is closed', async () => {
    const clients = [];
    for (let i = 0; i < 4; i++) clients.push(await mcpClient(t.url, token));
    // The first two (and the suite's client) were evicted to make room.
    await expect(clients[0]?.ping()).rejects.toThrow();
    await expect(clients[3]?.ping()).resolves.toBeDefined();
    for (const c of clients) await c.close().catch(() => undefined);
    client = await mcpClient(t.url, token, { 'x-cairn-scope': 'mcp-test' });
  });
});
