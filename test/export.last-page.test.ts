import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The page of an export holding its last record says so (`next: null`), even when records the
// reader does not get (another agent's own notes, private notes not asked for) come after it in
// the store. Found by a review: such a page handed out a cursor whose page held no record and
// then `next: null`, a round trip for nothing that reads as if something went wrong.

let t: TestNode;
let reader: string;
type Page = { records: { kind: string; key?: string }[]; next: string | null };

beforeAll(async () => {
  t = await startTestNode({ allowPrivate: true });
  const writer = (await t.token({ agent: 'writer', user: 'ann' })).token;
  reader = (await t.token({ agent: 'reader', user: 'ann' })).token;
  const facts = { entities: [{ name: 'Ann', type: 'person' }] };
  const note = (key: string, extra: Record<string, unknown>) => ({ key, value: key, kind: 'decision', ...extra });
  const writes: [string, Record<string, unknown>][] = [
    [reader, { facts }],
    // Notes export in key order: `a` is the reader's, `b`…`d` withheld from it, `e` the reader's.
    [reader, note('a', {})],
    [writer, note('b', { visibility: 'agent' })],
    [writer, note('c', { visibility: 'agent' })],
    [reader, note('d', { private: true })],
    [reader, note('e', {})],
    [writer, note('f', { visibility: 'agent' })],
    [reader, note('g', { private: true })],
  ];
  for (const [token, body] of writes) {
    const verb = 'facts' in body ? 'remember' : 'note_write';
    const r = await t.call('POST', `/v1/memory/${verb}`, { token, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

async function pages(limit: number): Promise<Page[]> {
  const out: Page[] = [];
  let cursor: string | null = null;
  do {
    const body = { limit, ...(cursor === null ? {} : { cursor }) };
    const r = await t.call('POST', '/v1/memory/export', { token: reader, body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(r.body as unknown as Page);
    cursor = out.at(-1)?.next ?? null;
  } while (cursor !== null);
  return out;
}

const shape = (ps: Page[]) => ps.map((p) => p.records.map((r) => r.key ?? r.kind));

it('ends on the page holding the last record the reader gets, at every page size', async () => {
  // header, entity Ann, notes a and e: b, c, d, f and g are not the reader's.
  expect(shape(await pages(1))).toEqual([['header'], ['entity'], ['a'], ['e']]);
  expect(shape(await pages(2))).toEqual([
    ['header', 'entity'],
    ['a', 'e'],
  ]);
  expect(shape(await pages(3))).toEqual([['header', 'entity', 'a'], ['e']]);
  expect(shape(await pages(4))).toEqual([['header', 'entity', 'a', 'e']]);
});

it('ends the same way over MCP', async () => {
  const client = await mcpClient(t.url, reader);
  try {
    const page = toolJson(await client.callTool({ name: 'memory_export', arguments: { limit: 4 } }));
    expect(page.isError).toBe(false);
    const keys = (page.body.records as { key?: string; kind: string }[]).map((r) => r.key ?? r.kind);
    expect([keys, page.body.next]).toEqual([['header', 'entity', 'a', 'e'], null]);
  } finally {
    await client.close();
  }
});
