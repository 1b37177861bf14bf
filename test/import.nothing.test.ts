import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// What "nothing to import" means. The admin import route takes an export file, and every export
// file holds at least its header: a body with no record line, or whose first one is no record
// (`{}`, `[]`, a saved memory_export reply), is refused (422 VALIDATION_ERROR naming `body`) and
// changes nothing (found by an audit: each answered 200 with zero counts). An export of an empty
// scope is its header alone and still imports. memory_import takes one export page, and a page
// can hold no record at all (what its cursor named forgotten after the page before), so
// `records: []` is an import of nothing, 200; leaving `records` out is refused naming it.

let t: TestNode;
const NDJSON = { 'content-type': 'application/x-ndjson' };
const importFile = (body: string, query = 'user=u&scope=s', headers: Record<string, string> = NDJSON) =>
  t.call('POST', `/v1/admin/import?${query}`, { body, headers });

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => t.stop());

it('refuses a body with no record, or whose first record line is no record, and stores nothing', async () => {
  const reply = JSON.stringify({ records: [{ kind: 'entity', id: '1', name: 'Ann' }], next: null });
  const cases: [string, string][] = [
    ['', 'no records'],
    ['\n  \n\n', 'no records'],
    ['{}', 'line 1 is a JSON object without a `kind`'],
    ['[]', 'line 1 is a JSON array (send the records one a line, not as an array)'],
    [
      '\n[{"kind":"entity","id":"1","name":"Ann"}]\n',
      'line 2 is a JSON array (send the records one a line, not as an array)',
    ],
    ['null', 'line 1 is null'],
    [reply, 'line 1 is a memory_export reply (`{records, next}`): write its records one a line'],
    ['name,kind\nAnn,entity\n', 'line 1 is not JSON'],
  ];
  const before = await t.txn();
  for (const [body, problem] of cases) {
    for (const query of ['user=u&scope=s', 'user=u&scope=s&empty=true']) {
      const r = await importFile(body, query);
      expect([r.status, r.body.error?.code], `${query}: ${body}`).toEqual([422, 'VALIDATION_ERROR']);
      expect(r.body.error?.details).toEqual([{ field: 'body', message: problem }]);
      expect(r.body.error?.message).toContain('an export file holds one JSON record a line');
    }
  }
  expect((await importFile('')).body.error?.message).toMatch(
    /^the body holds no records \(0 bytes\): nothing to import/,
  );
  expect((await importFile('[]')).body.error?.message).toMatch(
    /^the body is not an export file: line 1 is a JSON array/,
  );
  expect(await t.txn()).toBe(before);
  const status = await t.call('GET', '/v1/memory/status?user_id=u&scope=s');
  expect(status.body.scopes).toEqual([]);
});

it('refuses a body of another type (415) and stores nothing', async () => {
  const before = await t.txn();
  const line = JSON.stringify({ kind: 'entity', id: '1', name: 'Ann' });
  const types: Record<string, string>[] = [
    { 'content-type': 'application/json' },
    { 'content-type': 'text/plain' },
    {},
  ];
  for (const headers of types) {
    const r = await importFile(line, 'user=u&scope=s', headers);
    expect([r.status, r.body.error?.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  }
  expect(await t.txn()).toBe(before);
});

it('imports the export of an empty scope, its header alone, both ways', async () => {
  const page = await t.call('POST', '/v1/memory/export', { body: { user_id: 'u', scope: 'never-written' } });
  const records = page.body.records as { kind: string }[];
  expect([page.status, records.map((r) => r.kind), page.body.next]).toEqual([200, ['header'], null]);
  const file = `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
  for (const query of ['user=u&scope=copy', 'user=u&scope=package&empty=true']) {
    const r = await importFile(file, query);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ mode: 'load', imported: { entities: 0, facts: 0, notes: 0 }, skipped: [] });
  }
});

it('memory_import takes an export page holding no record, and refuses a call without records', async () => {
  const writer = (await t.token({ agent: 'writer', user: 'ann' })).token;
  const reader = (await t.token({ agent: 'reader', user: 'ann' })).token;
  const facts = { entities: [{ name: 'Ann', type: 'person' }] };
  expect((await t.call('POST', '/v1/memory/remember', { token: reader, body: { facts } })).status).toBe(200);
  // Another agent's own note, last in the store and withheld from this reader: the page before it
  // is the last (export.last-page.test.ts); before session 38 a page of no record came after it.
  const note = { key: 'plan', value: 'mine', kind: 'decision', visibility: 'agent' };
  expect((await t.call('POST', '/v1/memory/note_write', { token: writer, body: note })).status).toBe(200);
  const pages: { records: unknown[]; next: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const r = await t.call('POST', '/v1/memory/export', {
      token: reader,
      body: { limit: 2, ...(cursor ? { cursor } : {}) },
    });
    expect(r.status).toBe(200);
    pages.push(r.body as unknown as (typeof pages)[number]);
    cursor = pages.at(-1)?.next ?? null;
  } while (cursor !== null);
  expect(pages.map((p) => p.records.length)).toEqual([2]);

  const copy = { token: reader };
  for (const page of pages) {
    const r = await t.call('POST', '/v1/memory/import', { ...copy, body: { scope: 'copy', records: page.records } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.skipped).toEqual([]);
  }
  const recall = await t.call('POST', '/v1/memory/recall', { ...copy, body: { scope: 'copy', subject: 'Ann' } });
  expect([recall.body.state, (recall.body.subject as { name: string }).name]).toEqual(['answered', 'Ann']);

  const before = await t.txn();
  const missing = await t.call('POST', '/v1/memory/import', { ...copy, body: { scope: 'copy' } });
  expect([missing.status, missing.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'records' })]]);
  const client = await mcpClient(t.url, reader);
  try {
    const none = toolJson(await client.callTool({ name: 'memory_import', arguments: {} }));
    expect(none.isError).toBe(true);
    expect((none.body.error as { details: { field: string }[] }).details).toEqual([
      expect.objectContaining({ field: 'records' }),
    ]);
    const empty = toolJson(await client.callTool({ name: 'memory_import', arguments: { records: [] } }));
    expect([empty.isError, empty.body.imported, empty.body.skipped]).toEqual([
      false,
      { entities: 0, facts: 0, documents: 0, notes: 0, handoffs: 0 },
      [],
    ]);
  } finally {
    await client.close();
  }
  expect(await t.txn()).toBe(before);
});
