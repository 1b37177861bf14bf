import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Paging an export through the per-token rate limit (found by an audit: a 100k-entity scope took
// 2,788 default pages, and at 1,200 requests a minute a client paging it was refused after 1,200).
// A continuation page (with a cursor) costs a sixteenth of a request per 64 KiB its `maxBytes`
// allows, at most one; the first page, and a refused one, cost a whole request. Here the limit is
// 10 requests a minute, and the pages are the smallest (1 KiB), so a scope takes many more pages
// than 10 requests would allow.

let t: TestNode;
const ENTITIES = 200;
type Page = { records: { kind: string; name?: string }[]; next: string | null };

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 10 });
  const entities = Array.from({ length: ENTITIES }, (_, i) => ({ name: `Widget ${i}`, type: 'product' }));
  // The admin token's own count: one request.
  const r = await t.call('POST', '/v1/memory/remember', { body: { user_id: 'ann', facts: { entities } } });
  expect(r.status).toBe(200);
});
afterAll(async () => t.stop());

const exporter = async () => (await t.token({ agent: `exporter-${Math.random()}`, user: 'ann' })).token;
const exportPage = (token: string, body: object) => t.call('POST', '/v1/memory/export', { token, body });

it('pages a scope over HTTP through more pages than the limit has requests, each continuation 1/16', async () => {
  const token = await exporter();
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const r = await exportPage(token, { maxBytes: 1024, ...(cursor === null ? {} : { cursor }) });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The count the reply reports stays a whole number of requests.
    expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    pages.push(r.body as unknown as Page);
    cursor = pages.at(-1)?.next ?? null;
  } while (cursor !== null);
  const n = pages.length;
  expect(n).toBeGreaterThan(30);
  const names = pages.flatMap((p) => p.records.filter((r) => r.kind === 'entity').map((r) => r.name));
  expect(new Set(names).size).toBe(ENTITIES);

  // Used: one request for the first page and a sixteenth for each of the n - 1 others. What is
  // left goes to whole requests: first pages (each a whole one) until the limit refuses.
  const used = 16 + (n - 1);
  let taken = 0;
  for (;;) {
    const r = await exportPage(token, { maxBytes: 1024 });
    if (r.status !== 200) {
      expect([r.status, r.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      break;
    }
    taken++;
  }
  expect(taken).toBe(Math.floor((160 - used) / 16));
  // Refused, continuation pages too.
  const again = await exportPage(token, { maxBytes: 1024, cursor: pages[0]?.next });
  expect(again.status).toBe(429);
});

it('charges a whole request for a continuation page of 1 MiB or more, and for a refused one', async () => {
  const large = await exporter();
  const first = await exportPage(large, { limit: 5, maxBytes: 4 * 1024 * 1024 });
  let cursor = (first.body as unknown as Page).next;
  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await exportPage(large, { limit: 5, maxBytes: 4 * 1024 * 1024, cursor });
    statuses.push(r.status);
    if (r.status === 200) cursor = (r.body as unknown as Page).next;
  }
  expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 429]);

  const bad = await exporter();
  const refusals: number[] = [];
  for (let i = 0; i < 11; i++) refusals.push((await exportPage(bad, { cursor: 'not-a-cursor' })).status);
  expect(refusals).toEqual([422, 422, 422, 422, 422, 422, 422, 422, 422, 422, 429]);
});

/** First pages (a whole request each) an MCP client takes until the limit refuses one. */
async function firstPagesUntilRefused(client: Awaited<ReturnType<typeof mcpClient>>): Promise<number> {
  for (let taken = 0; ; taken++) {
    try {
      const r = toolJson(await client.callTool({ name: 'memory_export', arguments: { maxBytes: 1024 } }));
      expect(r.isError).toBe(false);
    } catch (err) {
      expect(String(err)).toContain('RATE_LIMITED');
      return taken;
    }
  }
}

it('pages a scope over MCP the same way', async () => {
  // What opening a session costs (the SDK's own requests), from a client that only takes first pages.
  const fresh = await mcpClient(t.url, await exporter());
  const opening = 10 - (await firstPagesUntilRefused(fresh));
  await fresh.close();

  const client = await mcpClient(t.url, await exporter());
  try {
    let pages = 0;
    let names = 0;
    let cursor: string | null = null;
    do {
      const args: Record<string, unknown> = { maxBytes: 1024, ...(cursor === null ? {} : { cursor }) };
      const page = toolJson(await client.callTool({ name: 'memory_export', arguments: args }));
      expect(page.isError, JSON.stringify(page.body)).toBe(false);
      const body = page.body as unknown as Page;
      names += body.records.filter((r) => r.kind === 'entity').length;
      pages++;
      cursor = body.next;
    } while (cursor !== null);
    expect([pages > 30, names]).toEqual([true, ENTITIES]);
    // The session's opening, the first page and a sixteenth for each other page used; what is left
    // goes to first pages.
    const used = 16 * opening + 16 + (pages - 1);
    expect(await firstPagesUntilRefused(client)).toBe(Math.floor((160 - used) / 16));
  } finally {
    await client.close();
  }
});
