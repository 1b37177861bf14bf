import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { VERBS } from '../ts/protocol/verbs.js';
import { replyComponents } from '../ts/server/reply-schemas.js';
import { makePdf } from './fixtures/documents.js';
import { ADMIN, type Reply, startTestNode, type TestNode } from './node.js';

// Real replies of a real node, route by route, held to the OpenAPI document: each 200 body
// validates against the route's documented schema, and against the same schema closed (every
// object naming all its fields), so a field the node sends but the schemas do not name fails
// here as surely as a field they name that the node does not send. Every status seen is one the
// document lists for that route, and every error body is the documented Error.

const DOC_ID = 'https://cairn.test/openapi.json';
const CLOSED_ID = 'https://cairn.test/closed.json';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
type Seen = { method: string; path: string; status: number; contentType: string; body: Reply['body'] };

let t: TestNode;
let doc: Doc;
const seen: Seen[] = [];
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/** A JSON pointer segment. */
const seg = (s: string) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'));

/** One call, recorded under its documented path (`{id}` for the token id). */
async function call(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string>; as?: string } = {},
): Promise<Reply> {
  const r = await t.call(method, path, opts);
  const documented = opts.as ?? path.split('?')[0] ?? path;
  const contentType = r.headers.get('content-type') ?? '';
  seen.push({ method, path: documented, status: r.status, contentType, body: r.body });
  return r;
}

const verb = (name: string, body: unknown, opts: { token?: string } = {}) =>
  call('POST', `/v1/memory/${name}`, { body, ...opts });

async function scenario(agent: string) {
  const s = 'openapi';
  await call('GET', '/health', { token: null });
  await call('GET', '/v1/whoami');
  await call('GET', '/v1/openapi.json', { token: null });
  await call('GET', '/docs', { token: null });
  const content = 'Priya Raman works at Acme. Acme is located in Berlin. Berlin is located in Germany.';
  const stored = await verb('remember', { scope: s, content, source: 'hr', date: '2024-01-01' });
  const pdf = makePdf([
    [
      { text: 'Handbook', size: 18, y: 720 },
      { text: 'Badges are issued on Mondays.', y: 690 },
    ],
  ]);
  await verb('document', { scope: s, content_base64: pdf.toString('base64'), name: 'handbook.pdf' });
  const long = Array.from({ length: 800 }, (_, i) => `Line ${i} of a long text.`).join('\n\n');
  await verb('document', { scope: s, content_base64: Buffer.from(long).toString('base64'), name: 'long.txt' });
  await verb('document', { scope: s, content_base64: 'AAECAw==', name: 'x.bin' });
  await verb('document', { scope: s, content_base64: pdf.subarray(0, 100).toString('base64'), name: 'cut.pdf' });
  await verb('remember', { scope: s, content, source: 'hr', date: '2024-01-01' });
  await verb('remember', {
    scope: s,
    facts: {
      entities: [
        { name: 'Priya Raman', type: 'person', attributes: { email: 'p@example.com' } },
        { name: 'Acme', type: 'company' },
      ],
      relations: [
        { source: 'Priya Raman', target: 'Acme', type: 'works_at' },
        { source: 'Acme', target: 'Berlin', type: 'located_in' },
        { source: 'Berlin', target: 'Germany', type: 'located_in' },
      ],
    },
  });
  await verb('remember', {
    scope: s,
    passages: [
      { text: 'Priya Raman manages Bob.', mentions: ['Priya Raman', 'Bob'] },
      { text: 'nothing here', mentions: ['Zed'] },
    ],
  });
  // A dated attribute write: the export then lists the entity's attribute_writes.
  await verb('remember', {
    scope: s,
    date: '2025-02-01',
    facts: { entities: [{ name: 'Priya Raman', attributes: { email: 'priya@example.org' } }] },
  });
  await verb('remember', { scope: s, messages: [{ role: 'user', content: 'I like green tea.' }] });
  await verb('relate', {
    scope: s,
    from: 'Priya Raman',
    to: 'Globex',
    type: 'works_at',
    replaces: true,
    date: '2025-01-01',
  });
  await verb('relate', {
    scope: s,
    from: 'Priya Raman',
    to: 'Acme',
    type: 'works_at',
    replaces: true,
    date: '2025-06-01',
  });
  // Said again with an attribute: the fact is revised (an earlier version, version_of) and keeps
  // its attribute writes.
  await verb('relate', {
    scope: s,
    from: 'Priya Raman',
    to: 'Acme',
    type: 'works_at',
    attributes: { role: 'lead' },
    date: '2025-09-01',
  });
  await verb('status', { scope: s });
  await call('GET', `/v1/memory/status?scope=${s}`);
  for (const body of [
    { subject: 'Priya' },
    { subject: 'Acme' },
    { subject: 'Nobody At All' },
    { attribute: { key: 'email', value: 'p@example.com' } },
    { subject: 'Berlin', compact: true, as_of: '2030-01-01', valid_at: '2024-06-01' },
    { subject: 'the' },
  ]) {
    await verb('recall', { scope: s, ...body });
  }
  const note = { scope: s, key: 'lang', kind: 'user_preference' };
  await verb('note_write', { ...note, value: { x: 1 }, confidence: 0.8, confidenceBasis: 'agent_inferred' });
  await verb('note_write', { ...note, value: { y: 2 }, writeMode: 'merge', expectedVersion: 1 });
  await verb('note_write', { ...note, value: { y: 3 }, expectedVersion: 1 });
  const task = { scope: s, key: 'step', visibility: 'task', taskId: 't1', kind: 'task_state' };
  await verb('note_write', { ...task, value: 'green tea step', idempotencyKey: 'i1' });
  await verb('note_write', { ...task, value: 'green tea step', idempotencyKey: 'i1' });
  await verb('note_write', { ...task, value: 'another body', idempotencyKey: 'i1' });
  for (const body of [
    { question: 'Where does Priya Raman work?' },
    { question: 'green tea', taskId: 't1' },
    { question: 'Where is Acme located?', tokenBudget: 40, purpose: 'coding' },
    { question: 'Zebra quantum chromodynamics?' },
    { question: 'Priya Raman salary' },
    { question: 'the' },
  ]) {
    await verb('context', { scope: s, ...body });
  }
  await verb('query', { scope: s, query: 'Where does Priya work and where is Berlin located?', includeHistory: true });
  await verb('query', { scope: s, query: 'x', subqueries: ['Acme', 'Zebra'], maxSteps: 1, maxItems: 1 });
  await verb('query', { scope: s, query: 'Where does Priya work and where is Acme?', timeoutMs: 1 });
  await verb('note_list', { scope: s });
  await verb('note_list', { scope: s, query: 'tea', taskId: 't1' });
  await verb('note_list', { scope: s, limit: 1 });
  await verb('history', { scope: s, key: 'lang' });
  // A private note's history: its values withheld (redacted) unless includePrivate is sent.
  await verb('note_write', { scope: s, key: 'pin', kind: 'user_fact', value: '1234', private: true });
  await verb('history', { scope: s, key: 'pin' });
  await verb('history', { scope: s, key: 'pin', includePrivate: true });
  await verb('history', { scope: s, subject: 'Priya Raman' });
  await verb('history', { scope: s, fact: { from: 'Priya Raman', to: 'Acme', type: 'works_at' } });
  const handoff = { scope: s, taskId: 't1', summary: 'half done', status: 'in_progress', decisions: ['a'] };
  await verb('handoff_create', { ...handoff, nextSteps: [{ do: 'b' }], expiresAt: '2099-01-01', to: 'claude' });
  // A retried handoff replays; the key reused for another capsule is a 409.
  const keyed = { scope: s, taskId: 't4', summary: 'keyed', idempotencyKey: 'h1' };
  await verb('handoff_create', keyed);
  await verb('handoff_create', keyed);
  await verb('handoff_create', { ...keyed, summary: 'another capsule' });
  await verb('handoff_resume', { scope: s, taskId: 't1' });
  // The task's capsule as a context item, in a pack and as query evidence.
  await verb('context', { scope: s, question: 'What is left on t1?', taskId: 't1', tokenBudget: 200 });
  await verb('query', { scope: s, query: 'What is left on t1?', taskId: 't1' });
  await verb('handoff_resume', { scope: s, taskId: 'no-such-task' });
  // A task whose newest handoff has expired, and one whose newest expired over an older live one
  // (an expiry must be in the future when it is written, so these expire a moment later).
  const soon = new Date(Date.now() + 1000).toISOString();
  await verb('handoff_create', { scope: s, taskId: 't2', summary: 'stale', expiresAt: soon });
  await verb('handoff_create', { scope: s, taskId: 't3', summary: 'live', expiresAt: '2099-01-01' });
  await verb('handoff_create', { scope: s, taskId: 't3', summary: 'stale', expiresAt: soon });
  await new Promise((resolve) => setTimeout(resolve, Date.parse(soon) - Date.now() + 100));
  await verb('handoff_resume', { scope: s, taskId: 't2' });
  await verb('handoff_resume', { scope: s, taskId: 't3' });
  await verb('handoff_resume', { scope: s }, { token: agent });
  // The note verbs run as another agent (admin): its agent-visibility note, and refusals.
  const own = { scope: s, key: 'own', visibility: 'agent' };
  await verb('note_write', { ...own, kind: 'decision', value: 'theirs' }, { token: agent });
  const asClaude = (v: string, body: object, token?: string) =>
    call('POST', `/v1/admin/agents/claude/memory/${v}`, {
      body,
      as: `/v1/admin/agents/{agent}/memory/${v}`,
      ...(token === undefined ? {} : { token }),
    });
  await asClaude('note_list', { scope: s, key: 'own' });
  await asClaude('history', { ...own });
  await asClaude('history', { scope: s, subject: 'Priya Raman' });
  await asClaude('note_list', { scope: s }, agent);
  await asClaude('forget', { scope: s, note: { key: 'own', visibility: 'agent' } });
  await asClaude('forget', { scope: s, note: { key: 'own', visibility: 'agent' } });
  await asClaude('forget', { scope: s, note: { key: 'never', visibility: 'agent' } });
  await asClaude('audit', { scope: s, limit: 3 });
  await call('POST', '/v1/admin/agents/not%20a%20name/memory/note_list', {
    body: { scope: s },
    as: '/v1/admin/agents/{agent}/memory/note_list',
  });
  await verb('audit', { scope: s, limit: 3 });
  await verb('export', { scope: s, limit: 3 });
  const all = await verb('export', { scope: s, limit: 5000 });
  const records = all.body.records as unknown[];
  await verb('import', { scope: `${s}-copy`, records });
  await verb('import', { scope: `${s}-copy`, records: [...records, { kind: 'bogus' }] });
  const lines = `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
  const ndjson = { 'content-type': 'application/x-ndjson' };
  await call('POST', `/v1/admin/import?scope=${s}-file`, { body: lines, headers: ndjson });
  await call('POST', `/v1/admin/import?scope=${s}-file`, { body: lines, headers: ndjson });
  await call('POST', '/v1/admin/import', { body: {} });
  await call('POST', `/v1/admin/import?scope=${s}-file&empty=true`, { body: lines, headers: ndjson });
  // Beside the data dir (one inside it is refused: compact --purge would not reach it).
  await call('POST', '/v1/admin/database/backup', { body: { dest: `${t.dataDir}-backup` } });
  await call('POST', '/v1/admin/database/backup', { body: { dest: join(t.dataDir, 'backup') } });
  await call('POST', '/v1/admin/database/backup/file');
  await call('POST', '/v1/admin/database/backup', { body: { dest: 'relative' } });
  await call('POST', '/v1/admin/database/compact', { body: { purge: true } });
  await verb('forget', { scope: s, subject: 'Bob' });
  await verb('forget', { scope: s, subject: 'Bob' });
  await verb('forget', { scope: s, subject: 'Priyaa Ramann' });
  await verb('forget', { scope: s, fact: { from: 'Berlin', to: 'Germany', type: 'located_in' } });
  await verb('forget', { scope: s, passage: stored.body.doc_id });
  await verb('forget', { scope: s, attribute: { subject: 'Priya Raman', key: 'email' } });
  await verb('forget', { scope: s, note: { key: 'lang' } });
  await verb('forget', { scope: `${s}-copy`, all: true });
  await verb('delete_user', { user_id: 'erased', confirm: true });
  await verb('remember', { user_id: 'erased', content: 'Temporary text.' });
  await verb('delete_user', { user_id: 'erased', confirm: true });
  // Refusals: no token, an agent on an admin route, the wrong body type, a refused field.
  await call('GET', '/v1/whoami', { token: null });
  await call('GET', '/v1/admin/check', { token: agent });
  await call('POST', '/v1/memory/recall', { body: 'subject=Priya', headers: { 'content-type': 'text/plain' } });
  await verb('recall', { scope: s, subject: 'Priya', nope: 1 });
  await call('GET', '/v1/mcp', { token: null });
  await mcp();
  await call('GET', '/v1/admin/check');
  const made = await call('POST', '/v1/admin/tokens', { body: { agent: 'bot', user: 'u1', scopes: ['a'] } });
  await call('GET', '/v1/admin/tokens');
  await call('DELETE', `/v1/admin/tokens/${made.body.id}`, { as: '/v1/admin/tokens/{id}' });
  await call('DELETE', '/v1/admin/tokens/000000000000', { as: '/v1/admin/tokens/{id}' });
  // A DELETE reads a body when it is sent one.
  const plain = { body: 'x', headers: { 'content-type': 'text/plain' } };
  await call('DELETE', '/v1/admin/tokens/000000000000', { ...plain, as: '/v1/admin/tokens/{id}' });
  await call('DELETE', '/v1/mcp', plain);
}

/** An MCP session: initialize, a tool call, then its end. */
async function mcp() {
  const headers = { accept: 'application/json, text/event-stream' };
  const init = await call('POST', '/v1/mcp', {
    headers,
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi-test', version: '0' } },
    },
  });
  const session = { ...headers, 'mcp-session-id': init.headers.get('mcp-session-id') ?? '' };
  await call('POST', '/v1/mcp', { headers: session, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
  await call('POST', '/v1/mcp', {
    headers: session,
    body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'memory_status', arguments: {} } },
  });
  await call('DELETE', '/v1/mcp', { headers: session });
  await call('DELETE', '/v1/mcp', { headers: session });
  await call('DELETE', '/v1/mcp', { headers });
  await call('POST', '/v1/mcp', { headers, body: '{not json', as: '/v1/mcp' });
  await call('POST', '/v1/mcp', { headers, body: { jsonrpc: '2.0', id: 3, method: 'tools/list' } });
}

beforeAll(async () => {
  // Private notes allowed, so a private note's history can be read both withheld and shown.
  t = await startTestNode({ allowPrivate: true });
  doc = (await t.call('GET', '/v1/openapi.json', { token: null })).body as unknown as Doc;
  ajv.addSchema({ ...doc, $id: DOC_ID });
  ajv.addSchema({ $id: CLOSED_ID, components: { schemas: replyComponents({ closed: true }) } });
  const agent = (await t.token({ agent: 'claude' })).token;
  expect(agent).not.toBe(ADMIN);
  await scenario(agent);
});
afterAll(async () => {
  await t.stop();
  rmSync(`${t.dataDir}-backup`, { recursive: true, force: true });
});

/** The documented response of one seen reply, or undefined when the document does not list it. */
function documented(s: Seen): { content?: Record<string, { schema?: { $ref?: string } }> } | undefined {
  return doc.paths[s.path]?.[s.method.toLowerCase()]?.responses[String(s.status)] as
    | { content?: Record<string, { schema?: { $ref?: string } }> }
    | undefined;
}

function validate(id: string, pointer: string, body: unknown): string[] {
  const v = ajv.getSchema(`${id}#${pointer}`);
  if (v === undefined) return [`no schema at ${pointer}`];
  return v(body) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

describe('real replies against the OpenAPI document', () => {
  it('answers every call with a status the document lists for its route', () => {
    const undocumented = seen
      .filter((s) => documented(s) === undefined)
      .map((s) => `${s.method} ${s.path} ${s.status}`);
    expect(undocumented).toEqual([]);
  });

  // A status is held to the document only when the scenario provokes it, so every verb that takes
  // an idempotencyKey must have been seen refusing a reused one: a new such verb fails here until
  // the scenario reuses its key, and then the test above until the document lists the 409.
  it('saw every verb that takes an idempotencyKey answer a reused key with 409 IDEMPOTENCY_CONFLICT', () => {
    const keyed = Object.entries(doc.paths)
      .filter(([path, ops]) => path.startsWith('/v1/memory/') && takes(ops.post, 'idempotencyKey'))
      .map(([path]) => path);
    expect(keyed).toContain('/v1/memory/note_write');
    const conflict = (path: string) =>
      seen.some((s) => s.path === path && s.status === 409 && s.body.error?.code === 'IDEMPOTENCY_CONFLICT');
    expect(keyed.filter((path) => !conflict(path))).toEqual([]);
  });

  it('saw a 200 from every documented 200 (so each reply schema is held to a real reply)', () => {
    const missed: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (op.responses['200'] === undefined) continue;
        if (!seen.some((s) => s.path === path && s.method.toLowerCase() === method && s.status === 200)) {
          missed.push(`${method} ${path}`);
        }
      }
    }
    expect(missed).toEqual([]);
  });

  it('saw the refusals the document promises: 401, 403, 404, 405, 409, 415, 422', () => {
    const statuses = new Set(seen.map((s) => s.status));
    for (const s of [401, 403, 404, 405, 409, 415, 422]) expect(statuses).toContain(s);
  });

  it('saw the reply variants the schemas describe', () => {
    const field = (path: string, get: (b: Record<string, unknown>) => unknown) =>
      new Set(
        seen.filter((x) => x.path === path && x.status === 200).map((x) => get(x.body as Record<string, unknown>)),
      );
    expect(field('/v1/memory/recall', (b) => b.state)).toEqual(
      new Set(['answered', 'nothing_stored', 'could_not_judge']),
    );
    const verdicts = field('/v1/memory/context', (b) => (b.grounding as { verdict: string }).verdict);
    for (const v of ['grounded', 'related', 'nothing_stored', 'could_not_judge']) expect(verdicts).toContain(v);
    const kinds = new Set(
      seen
        .filter((x) => x.path === '/v1/memory/context' && x.status === 200)
        .flatMap((x) => ((x.body as { items: { kind: string }[] }).items ?? []).map((i) => i.kind)),
    );
    expect(kinds).toEqual(new Set(['fact', 'passage', 'entity', 'note', 'handoff']));
    const resumed = field('/v1/memory/handoff_resume', (b) => b.state);
    expect(resumed).toEqual(new Set(['resumed', 'expired', 'none', 'listed']));
    expect(seen.some((x) => (x.body as { skippedExpired?: unknown }).skippedExpired !== undefined)).toBe(true);
    const redacted = seen
      .filter((x) => x.path === '/v1/memory/history' && x.status === 200)
      .flatMap((x) => (x.body.events as { redacted?: string }[]).map((e) => e.redacted));
    expect(redacted).toContain('private');
    const forgot = field('/v1/memory/forget', (b) => b.state);
    expect(forgot).toEqual(new Set(['forgotten', 'already_forgotten']));
    const records = field('/v1/memory/export', (b) => (b.records as { kind: string }[]).map((r) => r.kind).join());
    for (const k of ['header', 'entity', 'fact', 'document', 'note', 'handoff']) {
      expect([...records].join(), k).toContain(k);
    }
  });

  it.each(VERBS.map((v) => v.verb))('POST /v1/memory/%s: each 200 validates, open and closed', (name) => {
    const replies = seen.filter((s) => s.path === `/v1/memory/${name}` && s.status === 200);
    expect(replies.length).toBeGreaterThan(0);
    for (const s of replies) expectValid(s);
  });

  it('every other reply (other routes, every refusal) validates against its documented schema', () => {
    const verb200 = (s: Seen) => s.path.startsWith('/v1/memory/') && s.status === 200;
    const others = seen.filter((s) => !verb200(s));
    expect(others.length).toBeGreaterThan(10);
    for (const s of others) expectValid(s);
  });

  it('fails a reply with a field the schemas do not name, or a field of the wrong type', () => {
    const recall = seen.find((s) => s.path === '/v1/memory/recall' && (s.body as Recall).facts?.length > 0);
    if (recall === undefined) throw new Error('no recall with facts');
    const component = '/components/schemas/RecallReply';
    const extra = structuredClone(recall.body) as Recall;
    (extra.facts[0] as Record<string, unknown>).surprise = 1;
    expect(validate(DOC_ID, component, extra), 'the document leaves objects open').toEqual([]);
    expect(validate(CLOSED_ID, component, extra)).not.toEqual([]);
    const wrong = structuredClone(recall.body) as Recall;
    (wrong.facts[0] as Record<string, unknown>).id = 7;
    expect(validate(DOC_ID, component, wrong)).not.toEqual([]);
  });
});

type Recall = { facts: Record<string, unknown>[] };
type Operation = { requestBody?: { content: Record<string, { schema?: { properties?: object } }> } };

/** Whether an operation's JSON body has the field `name`. */
function takes(op: unknown, name: string): boolean {
  const properties = (op as Operation | undefined)?.requestBody?.content['application/json']?.schema?.properties;
  return properties !== undefined && name in properties;
}

/** `s` validates against its documented schema and, for a reply schema, its closed rendering. */
function expectValid(s: Seen) {
  const label = `${s.method} ${s.path} ${s.status}`;
  const schema = documented(s)?.content?.['application/json']?.schema;
  if (schema === undefined) {
    expect(s.contentType, label).not.toContain('application/json');
    return;
  }
  const pointer = ['paths', s.path, s.method.toLowerCase(), 'responses', String(s.status)].map(seg).join('/');
  const at = `/${pointer}/content/application~1json/schema`;
  expect(validate(DOC_ID, at, s.body), label).toEqual([]);
  const ref = schema.$ref;
  if (ref?.startsWith('#/components/schemas/') === true && ref !== '#/components/schemas/Error') {
    expect(validate(CLOSED_ID, ref.slice(1), s.body), `${label} (closed)`).toEqual([]);
  }
}
