import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { VERBS } from '../ts/protocol/verbs.js';
import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// A read-only token (`--role reader`): a team's reviewer reads every verb's answer a token of its
// user and scopes may read, and no verb that writes runs for it, over HTTP or MCP, whatever the body.

let t: TestNode;
let reader: string;

/** A body each write verb would accept from an agent token (delete_user's erases the user). */
const WRITES: Record<string, unknown> = {
  remember: { content: 'Priya Raman reviews the release.' },
  document: { name: 'a.txt', content_base64: Buffer.from('A plain note.').toString('base64') },
  relate: { from: 'Priya Raman', to: 'Acme', type: 'works_at' },
  forget: { all: true },
  import: { records: [{ kind: 'entity', id: '1', name: 'Ann', types: ['person'] }] },
  note_write: { key: 'release', value: { ok: false }, kind: 'decision' },
  handoff_create: { taskId: 'release-1', summary: 'overwritten' },
  delete_user: { confirm: true },
};

/** A body each read verb answers 200 for, on what the team stored. */
const READS: Record<string, unknown> = {
  status: {},
  recall: { subject: 'Priya Raman' },
  context: { question: 'Where does Priya Raman work?' },
  query: { query: 'Where does Priya Raman work?' },
  export: {},
  note_list: {},
  history: { key: 'release' },
  handoff_resume: { taskId: 'release-1' },
  audit: {},
};

beforeAll(async () => {
  t = await startTestNode();
  const team = (await t.token({ agent: 'claude' })).token;
  const w = (verb: string, body: unknown) => t.call('POST', `/v1/memory/${verb}`, { token: team, body });
  expect((await w('remember', { content: 'Priya Raman works at Acme.' })).status).toBe(200);
  expect((await w('note_write', { key: 'release', value: { ok: true }, kind: 'decision' })).status).toBe(200);
  expect((await w('handoff_create', { taskId: 'release-1', summary: 'ship it' })).status).toBe(200);
  const made = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'reviewer', role: 'reader' } });
  expect([made.status, made.body.role]).toEqual([200, 'reader']);
  reader = made.body.token as string;
});
afterAll(() => t.stop());

it('covers every verb of the API', () => {
  expect(Object.keys({ ...WRITES, ...READS }).sort()).toEqual(VERBS.map((v) => v.verb).sort());
  expect(Object.keys(WRITES).sort()).toEqual(
    VERBS.filter((v) => v.writes)
      .map((v) => v.verb)
      .sort(),
  );
});

describe('over HTTP', () => {
  it.each(Object.entries(WRITES))('%s is 403 naming Authorization, nothing written', async (verb, body) => {
    const before = await t.txn();
    const r = await t.call('POST', `/v1/memory/${verb}`, { token: reader, body });
    expect([r.status, r.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(r.body.error?.message).toContain('read-only');
    expect(r.body.error?.details).toEqual([{ field: 'Authorization', message: expect.stringContaining('reader') }]);
    expect(await t.txn()).toBe(before);
  });
  it('a write with a malformed body is still 403, not a lesson in its fields', async () => {
    const r = await t.call('POST', '/v1/memory/note_write', { token: reader, body: { key: 'x', bogus: 1 } });
    expect([r.status, r.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    const deep = `{"key":"x","kind":"decision","value":${'['.repeat(100)}${']'.repeat(100)}}`;
    const d = await t.call('POST', '/v1/memory/note_write', { token: reader, body: deep });
    expect([d.status, d.body.error?.code]).toEqual([403, 'FORBIDDEN']);
  });
  it.each(Object.entries(READS))('%s answers', async (verb, body) => {
    const r = await t.call('POST', `/v1/memory/${verb}`, { token: reader, body });
    expect([verb, r.status]).toEqual([verb, 200]);
  });
  it('whoami and the token list name the role; the admin routes refuse it', async () => {
    expect((await t.call('GET', '/v1/whoami', { token: reader })).body.role).toBe('reader');
    const list = await t.call('GET', '/v1/admin/tokens');
    expect((list.body.tokens as { agent: string; role: string }[]).find((x) => x.agent === 'reviewer')?.role).toBe(
      'reader',
    );
    const admin = await t.call('GET', '/v1/admin/tokens', { token: reader });
    expect([admin.status, admin.body.error?.code]).toEqual([403, 'FORBIDDEN']);
  });
});

describe('over MCP', () => {
  it('tools/list offers only the tools that write nothing, and the instructions say only to read', async () => {
    const c = await mcpClient(t.url, reader);
    expect(c.getInstructions()).toContain('writes nothing');
    expect(c.getInstructions()).not.toMatch(/memory_remember|memory_note_write|memory_handoff_create/);
    const { tools } = await c.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(
      VERBS.filter((v) => v.tool !== null && !v.writes)
        .map((v) => v.tool)
        .sort(),
    );
    await c.close();
  });
  it('a write tool is a FORBIDDEN tool error, a read tool answers', async () => {
    const c = await mcpClient(t.url, reader);
    const before = await t.txn();
    const w = toolJson(
      await c.callTool({ name: 'memory_note_write', arguments: { key: 'release', value: 1, kind: 'decision' } }),
    );
    expect([w.isError, (w.body.error as { code: string }).code]).toEqual([true, 'FORBIDDEN']);
    expect(await t.txn()).toBe(before);
    const r = toolJson(await c.callTool({ name: 'memory_note_list', arguments: {} }));
    expect(r.isError).toBe(false);
    expect((r.body.notes as { key: string; value: unknown }[]).map((n) => [n.key, n.value])).toEqual([
      ['release', { ok: true }],
    ]);
    await c.close();
  });
});
