import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The size of history a model is handed: memory_query's `includeHistory` within the budget, and
// memory_history pages bounded in bytes (found by an audit: a 1,000-token budget answered 198 KB,
// 190 KB of it twenty 3 KB versions of one note).

let t: TestNode;
let token: string;
const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { token, body });
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');
// Thirty versions of about 3 KB each: every event carries before, after and patch, about 9 KB.
const VERSIONS = 30;
const value = (i: number) => `busy task state step ${i}: ${'lorem ipsum dolor sit amet '.repeat(110)}`;

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  for (let i = 1; i <= VERSIONS; i++) {
    const w = await post('note_write', { key: 'busy', value: value(i), kind: 'task_state' });
    expect(w.status).toBe(200);
  }
  // More notes the query reaches, so that their histories together pass the default bound.
  for (const key of ['busy.alpha', 'busy.beta', 'busy.gamma']) {
    for (let i = 1; i <= 4; i++) {
      const w = await post('note_write', { key, value: value(i), kind: 'task_state' });
      expect(w.status).toBe(200);
    }
  }
});
afterAll(async () => t.stop());

type Target = { target: { key?: string }; events: { after?: { value?: string } }[]; omittedEvents?: number };

describe('memory_query includeHistory', () => {
  it('spends only what the pack left of tokenBudget, leaving whole events out and saying so', async () => {
    const r = await post('query', {
      query: 'What is the busy task state step?',
      includeHistory: true,
      tokenBudget: 3000,
    });
    expect(r.status).toBe(200);
    const history = r.body.history as Target[];
    const budget = r.body.historyBudget as { limit: number; used: number; omittedEvents: number };
    const used = (r.body.budget as { used: number }).used;
    expect(budget.limit).toBe(3000 - used);
    expect(budget.used).toBeLessThanOrEqual(budget.limit);
    expect(bytes(history)).toBeLessThan(4 * budget.limit + 500);
    const busy = history.find((h) => h.target.key === 'busy');
    expect(busy?.omittedEvents).toBeGreaterThan(0);
    expect(budget.omittedEvents).toBeGreaterThan(0);
    // What is kept is whole, oldest first, and no cursor skips what was left out.
    expect(busy?.events.map((e) => e.after?.value)).toEqual(busy?.events.map((_, i) => value(i + 1)));
    expect((busy as { nextCursor?: unknown }).nextCursor).toBeNull();
    // The whole reply stays near the budget, not 50 times it.
    expect(bytes(r.body)).toBeLessThan(4 * 3000 * 3);
  });

  it('without tokenBudget is bounded by 8,000 estimated tokens', async () => {
    const r = await post('query', { query: 'What is the busy task state step?', includeHistory: true });
    expect(r.status).toBe(200);
    const budget = r.body.historyBudget as { limit: number; used: number; omittedEvents: number };
    expect(budget.limit).toBe(8000);
    expect(budget.used).toBeLessThanOrEqual(8000);
    expect(budget.omittedEvents).toBeGreaterThan(0);
    expect(bytes(r.body.history)).toBeLessThan(8000 * 4 + 500);
  });

  it('over MCP too', async () => {
    const client = await mcpClient(t.url, token);
    try {
      const res = toolJson(
        await client.callTool({
          name: 'memory_query',
          arguments: {
            query: 'What is the busy task state step?',
            includeHistory: true,
            tokenBudget: 1000,
            compact: true,
          },
        }),
      );
      expect(res.isError).toBe(false);
      expect(bytes(res.body)).toBeLessThan(4 * 1000 * 4);
    } finally {
      await client.close();
    }
  });
});

type Page = {
  events: { seq: string; before?: unknown; after?: unknown; patch?: unknown; op: string }[];
  nextCursor: string | null;
};

describe('memory_history pages', () => {
  it('end early past 32 KB, at least one event a page, and page through every event', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await post('history', { key: 'busy', ...(cursor === undefined ? {} : { cursor }) });
      expect(r.status).toBe(200);
      const page = r.body as unknown as Page;
      expect(page.events.length).toBeGreaterThan(0);
      expect(bytes(page.events)).toBeLessThanOrEqual(32 * 1024 + 100);
      seen.push(...page.events.map((e) => e.seq));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen).toHaveLength(VERSIONS);
    expect(new Set(seen).size).toBe(VERSIONS);
    expect(pages).toBeGreaterThan(2);
  });

  it('hold one event however large', async () => {
    const big = 'x'.repeat(60 * 1024);
    expect((await post('note_write', { key: 'huge', value: big, kind: 'task_state' })).status).toBe(200);
    expect((await post('note_write', { key: 'huge', value: `${big}y`, kind: 'task_state' })).status).toBe(200);
    const first = (await post('history', { key: 'huge' })).body as unknown as Page;
    expect(first.events).toHaveLength(1);
    expect(first.nextCursor).not.toBeNull();
    const second = (await post('history', { key: 'huge', cursor: first.nextCursor })).body as unknown as Page;
    expect(second.events).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
  });

  it('compact leaves out before and after, keeping op and patch (over MCP)', async () => {
    const client = await mcpClient(t.url, token);
    try {
      const res = toolJson(
        await client.callTool({ name: 'memory_history', arguments: { key: 'busy', compact: true } }),
      );
      expect(res.isError).toBe(false);
      const page = res.body as unknown as Page;
      const full = (await post('history', { key: 'busy' })).body as unknown as Page;
      // A third the size each, so three times as many fit the 32 KB a page may hold.
      expect(page.events.length).toBeGreaterThanOrEqual(3 * full.events.length);
      expect(bytes(page.events)).toBeLessThanOrEqual(32 * 1024);
      for (const e of page.events) {
        expect(e).not.toHaveProperty('before');
        expect(e).not.toHaveProperty('after');
        expect(e.op).toBeTypeOf('string');
      }
      expect(page.events[0]?.patch).toMatchObject({ value: value(1) });
    } finally {
      await client.close();
    }
  });
});
