import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// How a request names a note, through a real node: a taskId alone names a task note, a taskId
// beside user or agent is refused (it would be dropped and widen who reads the note), a blank key
// is refused, and a lone surrogate anywhere in a body is refused naming the field that holds it.

let t: TestNode;
let alpha: string;
let beta: string;

beforeAll(async () => {
  t = await startTestNode();
  alpha = (await t.token({ agent: 'alpha', user: 'u1' })).token;
  beta = (await t.token({ agent: 'beta', user: 'u1' })).token;
});
afterAll(async () => t.stop());

const P = (token: string, verb: string, body: unknown) => t.call('POST', `/v1/memory/${verb}`, { token, body });

/** Sends `body` and expects a 422 naming `field`, with nothing written. */
async function refused(verb: string, body: unknown, field: string, message?: string) {
  const before = await t.txn();
  const r = await P(alpha, verb, body);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error?.code).toBe('VALIDATION_ERROR');
  const detail = r.body.error?.details[0] as { field: string; message: string };
  expect(detail.field).toBe(field);
  if (message !== undefined) expect(detail.message).toBe(message);
  expect(await t.txn()).toBe(before);
}

describe('a taskId names a task note', () => {
  it('note_write with a taskId alone writes a task note only that task sees', async () => {
    const w = await P(alpha, 'note_write', { key: 'tw', taskId: 'T9', value: 1, kind: 'decision' });
    expect(w.status).toBe(200);
    expect(w.body).toMatchObject({ visibility: 'task', taskId: 'T9', version: 1 });
    const others = await P(beta, 'note_list', {});
    expect((others.body.notes as { key: string }[]).map((n) => n.key)).not.toContain('tw');
    const task = await P(beta, 'note_list', { taskId: 'T9' });
    expect((task.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['tw']);
  });

  it('history with a taskId alone reads the task note', async () => {
    await P(alpha, 'note_write', { key: 'vt', taskId: 'TX', value: 'a', kind: 'task_state' });
    const h = await P(beta, 'history', { key: 'vt', taskId: 'TX' });
    expect(h.status).toBe(200);
    expect((h.body.events as unknown[]).length).toBe(1);
    expect(h.body.events).toEqual(
      (await P(beta, 'history', { key: 'vt', visibility: 'task', taskId: 'TX' })).body.events,
    );
  });

  for (const visibility of ['user', 'agent']) {
    it(`a taskId beside visibility ${visibility} is refused on every verb that names a note`, async () => {
      const named = { key: 'vt', visibility, taskId: 'TX' };
      await refused('note_write', { ...named, value: 1, kind: 'decision' }, 'taskId');
      await refused('note_list', { visibility, taskId: 'TX' }, 'taskId');
      await refused('history', named, 'taskId');
      await refused('forget', { note: named }, 'taskId');
    });
  }

  it('forget {note} with a taskId alone forgets the task note', async () => {
    await P(alpha, 'note_write', { key: 'gone', taskId: 'TF', value: 1, kind: 'decision' });
    const f = await P(alpha, 'forget', { note: { key: 'gone', taskId: 'TF' } });
    expect(f.body).toMatchObject({ state: 'forgotten', note: { key: 'gone', visibility: 'task', taskId: 'TF' } });
    expect((await P(alpha, 'note_list', { taskId: 'TF' })).body.notes).toEqual([]);
  });

  it('the MCP tools follow the same rule', async () => {
    const c = await mcpClient(t.url, alpha);
    try {
      const call = async (name: string, args: object) =>
        toolJson(await c.callTool({ name, arguments: args as Record<string, unknown> }));
      const w = await call('memory_note_write', { key: 'mcp', taskId: 'TM', value: 1, kind: 'decision' });
      expect(w.body).toMatchObject({ visibility: 'task', taskId: 'TM' });
      const bad = await call('memory_history', { key: 'mcp', visibility: 'user', taskId: 'TM' });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.body)).toContain('"field":"taskId"');
    } finally {
      await c.close();
    }
  });
});

describe('a blank key', () => {
  it('is refused by note_write, naming key', async () => {
    await refused('note_write', { key: '   ', value: 1, kind: 'decision' }, 'key');
  });
});

describe('a lone surrogate', () => {
  const ILL = 'must be well-formed Unicode (no lone surrogates)';
  // JSON text sent as is: JSON.parse takes the escape, but the string has no UTF-8 form.
  const raw = (s: string) => s.replaceAll('LONE', '\\ud800');

  it('in a note value is refused naming its path, as in a key', async () => {
    await refused('note_write', raw('{"key":"v","value":"badLONE","kind":"decision"}'), 'value', ILL);
    await refused('note_write', raw('{"key":"v","value":{"a":[1,"xLONE"]},"kind":"decision"}'), 'value.a.1', ILL);
    await refused('note_write', raw('{"key":"v","value":{"kLONE":1},"kind":"decision"}'), 'value', ILL);
    await refused('note_write', raw('{"key":"vLONE","value":1,"kind":"decision"}'), 'key', ILL);
  });

  it('in the free fields of other verbs is refused the same way', async () => {
    await refused('remember', raw('{"content":"aLONE"}'), 'content', ILL);
    await refused(
      'handoff_create',
      raw('{"taskId":"T","summary":"s","nextSteps":[{"do":"xLONE"}]}'),
      'nextSteps.0.do',
      ILL,
    );
    await refused(
      'relate',
      raw('{"from":"a","to":"b","type":"knows","attributes":{"since":"LONE"}}'),
      'attributes.since',
      ILL,
    );
  });
});
