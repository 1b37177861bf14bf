import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The contract's limits through a real node: what is within them is stored and found again
// exactly (whatever keys the engine builds from it), what is past them is refused naming the
// field and changes nothing; blank questions name their own field; a memory route asked with
// another method says which ones it takes.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());

const P = (verb: string, body: unknown) => t.call('POST', `/v1/memory/${verb}`, { token: agent, body });

async function refused(verb: string, body: unknown, field: string) {
  const before = await t.txn();
  const r = await P(verb, body);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error?.code).toBe('VALIDATION_ERROR');
  expect(((r.body.error?.details ?? []) as { field: string }[]).map((d) => d.field)).toContain(field);
  expect(await t.txn(), 'a refusal writes nothing').toBe(before);
  return r.body.error;
}

describe('attributes', () => {
  const many = (n: number, size = 1) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v'.repeat(size)]));

  // Found by an audit: one entity with 300k attributes (4.7 MiB) was stored, for every recall
  // of it to return whole.
  it('keeps 256 attributes and 64 KiB a call, refuses more naming the field', async () => {
    const at = { name: 'Wide One', type: 't', attributes: many(256) };
    expect((await P('remember', { scope: 'attrs', facts: { entities: [at] } })).status).toBe(200);
    const recall = await P('recall', { scope: 'attrs', subject: 'Wide One' });
    expect(Object.keys((recall.body.subject as { attributes: object }).attributes)).toHaveLength(256);
    const wide = { name: 'Wider One', type: 't', attributes: many(257) };
    const error = await refused(
      'remember',
      { scope: 'attrs', facts: { entities: [wide] } },
      'facts.entities.0.attributes',
    );
    expect(error?.message).toContain('at most 256 attributes a call');
    await refused(
      'relate',
      { scope: 'attrs', from: 'A', relation: 'r', to: 'B', attributes: many(3, 30_000) },
      'attributes',
    );
  });
});

describe('nesting', () => {
  const nested = (levels: number): unknown => {
    let v: unknown = 'x';
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };

  // Found by an audit: a value nested 126 deep was stored, then its history, forget and the
  // audit answered 500; 10,000 deep overflowed the node's stack.
  it('refuses free JSON nested past 32 levels, and a body nested thousands deep, naming the field', async () => {
    // A store's first notes call may write the notes index's marker: out of the way first.
    expect((await P('note_list', { scope: 'deep' })).status).toBe(200);
    await refused('note_write', { scope: 'deep', key: 'n', value: nested(33), kind: 'decision' }, 'value');
    await refused(
      'remember',
      { scope: 'deep', facts: { entities: [{ name: 'Deep One', type: 't', attributes: { k: nested(32) } }] } },
      'facts.entities.0.attributes',
    );
    for (const levels of [126, 10_000]) {
      // As text: JSON.stringify itself would overflow this process's stack at 10,000 levels.
      const body = `{"scope":"deep","key":"n","kind":"decision","value":${'['.repeat(levels)}"x"${']'.repeat(levels)}}`;
      const error = await refused('note_write', body, 'value');
      expect(error?.message).toBe('value: nests deeper than 64 levels');
    }
  });

  it('keeps a value at the limit readable through history, audit, export, import and forget', async () => {
    const w = await P('note_write', { scope: 'deep2', key: 'n', value: nested(32), kind: 'decision' });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const history = await P('history', { scope: 'deep2', key: 'n' });
    expect(history.status, JSON.stringify(history.body)).toBe(200);
    expect((await P('audit', { scope: 'deep2' })).status).toBe(200);
    const exported = await P('export', { scope: 'deep2' });
    const imported = await P('import', { scope: 'deep3', records: exported.body.records });
    expect(imported.status, JSON.stringify(imported.body).slice(0, 300)).toBe(200);
    const copy = await P('note_list', { scope: 'deep3', key: 'n' });
    expect((copy.body.notes as { value: unknown }[])[0]?.value).toEqual(nested(32));
    const forgot = await P('forget', { scope: 'deep2', note: { key: 'n' } });
    expect(forgot.body.state).toBe('forgotten');
  });
});

describe('within the limits', () => {
  it('stores a note that is one long unbroken token and finds it by that token', async () => {
    const jwt = (last: string) => `${'eyJhbGciOiJIUzI1NiJ9.'.repeat(80)}${last}`;
    for (const [key, last] of [
      ['big', 'a'],
      ['big2', 'b'],
    ] as const) {
      const r = await P('note_write', { scope: 'nl', key, value: { a: jwt(last) }, kind: 'decision' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const list = await P('note_list', { scope: 'nl', query: jwt('b') });
    expect(list.status).toBe(200);
    expect((list.body.notes as { key: string }[])[0]?.key).toBe('big2');
  });

  it('stores a turn longer than 64 KiB as passages of that turn alone (only the call has a limit)', async () => {
    const long = `${Array.from({ length: 1500 }, (_, i) => `Sentence ${i} talks about the harbour ledger.`).join(' ')} The final word is zanzibarquill.`;
    expect(long.length).toBeGreaterThan(64 * 1024);
    const messages = [
      { role: 'user', content: 'What about ledgers?' },
      { role: 'assistant', content: long },
    ];
    const r = await P('remember', { scope: 'turns', messages });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect((r.body.stored as { passages: number }).passages).toBeGreaterThan(10);
    const end = await P('context', { scope: 'turns', question: 'zanzibarquill' });
    const quote = (end.body.items as { citation: { span: { text: string } } }[])[0]?.citation.span.text;
    expect(quote).toContain('zanzibarquill');
    // The short turn is a passage of its own: the document's first (read from the export, as a
    // context of k: 100 keeps only the 64 KiB of items it can return of these 50 passages).
    const page = await P('export', { scope: 'turns', maxBytes: 4194304 });
    const doc = (
      page.body.records as { kind: string; text: string; passages: { start: number; end: number }[] }[]
    ).find((r) => r.kind === 'document');
    const [turn] = doc?.passages ?? [];
    expect(doc?.text.slice(turn?.start, turn?.end)).toBe('user: What about ledgers?');
  });

  it('relates two 800-byte names and recalls the edge from either end', async () => {
    const [from, to] = ['A'.repeat(800), 'B'.repeat(800)];
    const r = await P('relate', { scope: 'kb3', from, to, type: 'knows' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.created).toBe(true);
    expect((await P('relate', { scope: 'kb3', from, to, type: 'knows' })).body.created).toBe(false);
    const recall = await P('recall', { scope: 'kb3', subject: to });
    expect(recall.body.state).toBe('answered');
    expect((recall.body.facts as { subject: string; relation: string }[]).map((f) => [f.subject, f.relation])).toEqual([
      [from, 'knows'],
    ]);
    const history = await P('history', { scope: 'kb3', fact: { from, to, type: 'knows' } });
    expect((history.body.events as unknown[]).length).toBeGreaterThan(0);
  });

  it('stores a 1 KiB name in a 256-byte user and scope, recalls and forgets it', async () => {
    const [user_id, scope] = ['u'.repeat(256), 's'.repeat(256)];
    const name = 'Priya Raman '.repeat(86).slice(0, 1024).trim();
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(1024);
    const r = await P('remember', {
      user_id,
      scope,
      facts: { entities: [{ name, type: 'person' }], relations: [{ source: name, target: 'Lund', type: 'lives_in' }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const recall = await P('recall', { user_id, scope, subject: name });
    expect((recall.body.subject as { name: string }).name).toBe(name);
    expect((await P('forget', { user_id, scope, subject: name })).body.state).toBe('forgotten');
    expect((await P('forget', { user_id, scope, subject: name })).body.state).toBe('already_forgotten');
  });
});

describe('past the limits', () => {
  it('refuses each naming the field', async () => {
    const long = 'N'.repeat(1025);
    await refused('relate', { scope: 'past', from: long, to: 'b', type: 't' }, 'from');
    await refused(
      'remember',
      { scope: 'past', facts: { entities: [{ name: long, type: 'x' }] } },
      'facts.entities.0.name',
    );
    await refused('note_write', { scope: 'past', key: 'k', value: 'v'.repeat(65 * 1024), kind: 'decision' }, 'value');
    await refused('recall', { user_id: 'u'.repeat(257), subject: 'x' }, 'user_id');
  });
});

describe('blank questions', () => {
  it('name their own field with a clear message', async () => {
    const ctx = await refused('context', { question: '   ' }, 'question');
    expect(ctx?.message).toMatch(/blank/);
    const query = await refused('query', { query: ' \n ' }, 'query');
    expect(query?.message).toMatch(/blank/);
    await refused('query', { query: 'Priya', subqueries: ['Priya', '  '] }, 'subqueries.1');
  });
});

describe('a remember that holds nothing', () => {
  it('is refused naming facts, not answered already (found by an audit)', async () => {
    const error = await refused('remember', { scope: 'empty', facts: {} }, 'facts');
    expect(error?.message).toMatch(/no entities or relations/);
    await refused('remember', { scope: 'empty', facts: { entities: [], relations: [] } }, 'facts');
  });
});

describe('methods', () => {
  it.each([
    ['GET', 'recall', 'POST'],
    ['PUT', 'remember', 'POST'],
    ['DELETE', 'note_write', 'POST'],
    ['PATCH', 'status', 'GET, POST'],
  ])('%s /v1/memory/%s is 405 with Allow: %s, before auth', async (method, verb, allow) => {
    for (const token of [agent, null]) {
      const r = await t.call(method, `/v1/memory/${verb}`, { token });
      expect(r.status).toBe(405);
      expect(r.headers.get('allow')).toBe(allow);
      expect(r.body.error?.code).toBe('METHOD_NOT_ALLOWED');
    }
  });

  it('leaves unknown verbs 404', async () => {
    expect((await t.call('GET', '/v1/memory/nonsense', { token: agent })).status).toBe(404);
  });
});
