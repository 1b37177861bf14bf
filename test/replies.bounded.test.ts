import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Every verb's reply is bounded by default and says what it left out (found by an audit of
// worst-case data: a refusal of 5,000 bad relations was 2.2 MB, a status of 2,000 scopes 164 KB,
// a recall of entities and facts with 60 KB attributes 1.2 and 2.4 MB, a context over long
// passages or many attributes 1.2 MB, a note list of 60 KB notes 1.2 MB (6 MB at `limit: 100`),
// a handoff list of 64 KiB capsules 1.3 MB).

let t: TestNode;
let token: string;
let codex: string;
const post = (verb: string, body: object, as = token) => t.call('POST', `/v1/memory/${verb}`, { token: as, body });
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');
const KiB = 1024;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 1e9 });
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
});
afterAll(async () => t.stop());

/** Follows `next` (or `nextCursor`) from `first`, returning every page. */
async function pages(verb: string, body: object, field: 'next' | 'nextCursor') {
  const all = [];
  let cursor: unknown = null;
  do {
    const r = await post(verb, cursor === null ? body : { ...body, cursor });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    all.push(r.body);
    cursor = r.body[field];
  } while (cursor !== null && all.length < 100);
  return all;
}

describe('refusals', () => {
  it('name the first 20 issues and count the rest', async () => {
    const relations = Array.from({ length: 5000 }, () => ({ source: '', target: 5, type: '' }));
    const before = await t.txn();
    const r = await post('remember', { scope: 'e', facts: { relations } });
    expect(r.status).toBe(422);
    const details = r.body.error?.details as { field: string; message: string }[];
    expect(details).toHaveLength(21);
    expect(details[0]?.field).toBe('facts.relations.0.source');
    // Three a relation: an empty source and type each one issue ("must not be empty"), target's type.
    expect(details[20]).toEqual({ field: '(more)', message: '14980 more issues not listed (15000 in all)' });
    expect(bytes(r.body)).toBeLessThan(4 * KiB);
    expect(await t.txn()).toBe(before);
  });
});

describe('memory_status', () => {
  it('lists at most 100 scopes, those holding the most, and counts the rest', async () => {
    for (let i = 0; i < 130; i++) {
      const w = await post('note_write', {
        scope: `s${String(i).padStart(3, '0')}`,
        key: 'k',
        value: 1,
        kind: 'user_fact',
      });
      expect(w.status).toBe(200);
    }
    // The scope holding the most is kept though it sorts last by name.
    await post('relate', { scope: 'zz-big', from: 'A', to: 'B', type: 'knows' });
    const r = await t.call('GET', '/v1/memory/status', { token });
    expect(r.status).toBe(200);
    const scopes = r.body.scopes as { scope: string }[];
    expect(scopes).toHaveLength(100);
    expect(scopes.at(-1)?.scope).toBe('zz-big');
    expect(scopes.map((s) => s.scope)).toEqual(scopes.map((s) => s.scope).sort());
    expect(r.body.scopes_omitted).toBe(31);
    expect(r.body.scopes_hint).toMatch(/memory_status with `scope`/);
    expect(bytes(r.body)).toBeLessThan(12 * KiB);
    const one = await t.call('GET', '/v1/memory/status?scope=s129', { token });
    expect(one.body.scope).toMatchObject({ notes: 1 });
  });
});

describe('memory_recall', () => {
  it("shows at most 8 KiB of a subject's attributes and names what it left", async () => {
    for (let c = 0; c < 20; c++) {
      const attributes = Object.fromEntries(Array.from({ length: 250 }, (_, i) => [`k${c}_${i}`, `v${i}`]));
      attributes[`big${c}`] = 'z'.repeat(60_000);
      const w = await post('remember', {
        scope: 'attr',
        facts: { entities: [{ name: 'Attr', type: 'thing', attributes }] },
      });
      expect(w.status, JSON.stringify(w.body).slice(0, 300)).toBe(200);
    }
    const r = await post('recall', { scope: 'attr', subject: 'Attr' });
    expect(r.status).toBe(200);
    const subject = r.body.subject as { attributes: object; attributes_omitted: Record<string, unknown> };
    expect(bytes(subject.attributes)).toBeLessThanOrEqual(8 * KiB);
    const shown = Object.keys(subject.attributes).length;
    expect(subject.attributes_omitted.count).toBe(20 * 251 - shown);
    expect(subject.attributes_omitted.keys).toHaveLength(10);
    expect(subject.attributes_omitted.hint).toMatch(/memory_export/);
    expect(bytes(r.body)).toBeLessThan(12 * KiB);
  });

  it('ends a page at 64 KiB of facts, each attribute-heavy fact bounded, and `next` reaches every one', async () => {
    for (let c = 0; c < 40; c++) {
      const attributes = { blob: 'q'.repeat(55_000), part: 'p'.repeat(7_000) };
      const w = await post('relate', { scope: 'facts', from: 'Heavy', to: `O${c}`, type: 'has', attributes });
      expect(w.status).toBe(200);
    }
    const all = await pages('recall', { scope: 'facts', subject: 'Heavy' }, 'next');
    type Fact = { object: string; attributes: { part?: string }; attributes_omitted?: { keys: string[] } };
    const facts = all.flatMap((p) => p.facts as Fact[]);
    expect(new Set(facts.map((f) => f.object)).size).toBe(40);
    expect(facts).toHaveLength(40);
    for (const f of facts) {
      expect(f.attributes.part).toHaveLength(7_000);
      expect(f.attributes_omitted?.keys).toEqual(['blob']);
    }
    for (const p of all) expect(bytes(p.facts)).toBeLessThanOrEqual(64 * KiB);
    expect(all.length).toBeGreaterThan(4);
    const first = all[0] ?? {};
    expect(first.omitted).toBe(40 - (first.facts as Fact[]).length);
    expect(first.omitted_hint).toMatch(/at most 65536 bytes of facts/);
    // Without a cursor the default page alone was 2.4 MB; a larger `k` does not pass the bound.
    const big = await post('recall', { scope: 'facts', subject: 'Heavy', k: 1000 });
    expect(bytes(big.body)).toBeLessThan(80 * KiB);
  });
});

describe('memory_context', () => {
  beforeAll(async () => {
    const words = 'lorem ipsum dolor sit amet consectetur '.repeat(1500);
    const passages = Array.from({ length: 12 }, (_, i) => ({ text: `Zeta report ${i}: ${words}`, mentions: ['Zeta'] }));
    const w = await post('remember', { scope: 'ctx', passages });
    expect(w.status, JSON.stringify(w.body).slice(0, 300)).toBe(200);
  });

  it('keeps items within 64 KiB and names those left out', async () => {
    const r = await post('context', { scope: 'ctx', question: 'What did the Zeta report say about lorem?', k: 100 });
    expect(r.status).toBe(200);
    const items = r.body.items as unknown[];
    expect(items.length).toBeGreaterThanOrEqual(1);
    expect(items.length === 1 || bytes(items) <= 64 * KiB).toBe(true);
    const omitted = r.body.omitted as { reason: string; rank: number }[];
    expect(omitted.length).toBeGreaterThan(0);
    expect(omitted.every((o) => o.reason === 'reply_bytes')).toBe(true);
    expect(r.body.omitted_total).toBe(omitted.length);
    expect(bytes(r.body)).toBeLessThan(200 * KiB);
  });

  it('a pack with no token budget is bounded the same way', async () => {
    const r = await post('context', {
      scope: 'ctx',
      question: 'What did the Zeta report say about lorem?',
      purpose: 'research',
      k: 100,
    });
    expect(r.status).toBe(200);
    expect((r.body.omitted as { reason: string }[]).some((o) => o.reason === 'reply_bytes')).toBe(true);
    expect(bytes(r.body)).toBeLessThan(400 * KiB);
  });

  it('over MCP the tool result is bounded alike', async () => {
    const client = await mcpClient(t.url, token);
    try {
      const res = toolJson(
        await client.callTool({
          name: 'memory_context',
          arguments: { scope: 'ctx', question: 'What did the Zeta report say about lorem?', k: 100 },
        }),
      );
      expect(res.isError).toBe(false);
      const items = res.body.items as unknown[];
      expect(items.length === 1 || bytes(items) <= 64 * KiB).toBe(true);
      expect(res.body.omitted_total).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('a small reply is unchanged: no `omitted` without a pack', async () => {
    const r = await post('context', { scope: 'facts', question: 'What does Heavy have?', k: 2 });
    expect(r.status).toBe(200);
    expect(r.body.omitted).toBeUndefined();
  });
});

describe('memory_note_list', () => {
  it('ends a page before 32 KiB of notes, and the cursor reaches every note once', async () => {
    for (let i = 0; i < 30; i++) {
      const w = await post('note_write', { scope: 'n', key: `big${i}`, value: 'v'.repeat(20_000), kind: 'user_fact' });
      expect(w.status).toBe(200);
    }
    for (const extra of [{}, { limit: 100 }, { query: 'big vvvv', limit: 100 }]) {
      const all = await pages('note_list', { scope: 'n', ...extra }, 'nextCursor');
      const keys = all.flatMap((p) => (p.notes as { key: string }[]).map((n) => n.key));
      expect(new Set(keys).size, JSON.stringify(extra)).toBe(30);
      expect(keys).toHaveLength(30);
      for (const p of all) expect(bytes(p.notes)).toBeLessThanOrEqual(32 * KiB);
    }
    const one = await post('note_list', { scope: 'n', limit: 100 });
    expect(bytes(one.body)).toBeLessThan(33 * KiB);
  });
});

describe('memory_handoff_resume', () => {
  it('lists capsules addressed to the caller within 32 KiB a page, at least one, the cursor reaching all', async () => {
    const decisions = Array.from({ length: 10 }, (_, i) => `${i} ${'d'.repeat(4000)}`);
    for (let i = 0; i < 5; i++) {
      const w = await post(
        'handoff_create',
        { scope: 'h', taskId: `t${i}`, summary: 's'.repeat(16_000), decisions, to: 'claude' },
        codex,
      );
      expect(w.status, JSON.stringify(w.body).slice(0, 300)).toBe(200);
    }
    const all = await pages('handoff_resume', { scope: 'h' }, 'nextCursor');
    const tasks = all.flatMap((p) => (p.handoffs as { taskId: string }[]).map((h) => h.taskId));
    expect(tasks).toEqual(['t4', 't3', 't2', 't1', 't0']);
    for (const p of all) expect(bytes(p)).toBeLessThan(64 * KiB);
  });
});

describe('memory_history', () => {
  it("shows an event's before and after within the attribute bound, the patch whole", async () => {
    for (let c = 0; c < 12; c++) {
      const attributes = { [`big${c}`]: 'z'.repeat(20_000) };
      const w = await post('remember', {
        scope: 'hist',
        facts: { entities: [{ name: 'Grower', type: 'thing', attributes }] },
      });
      expect(w.status).toBe(200);
    }
    for (let y = 2001; y <= 2030; y++) {
      const w = await post('relate', {
        scope: 'hist',
        from: 'Grower',
        to: 'Acme',
        type: 'works_at',
        attributes: { role: `${y} ${'r'.repeat(2000)}`, valid_from: `${y}-01-01` },
      });
      expect(w.status, JSON.stringify(w.body).slice(0, 300)).toBe(200);
    }
    type Event = {
      patch: unknown;
      after: { attributes_omitted?: { count: number }; attribute_writes_omitted?: number };
    };
    for (const target of [{ subject: 'Grower' }, { fact: { from: 'Grower', to: 'Acme', type: 'works_at' } }]) {
      const all = await pages('history', { scope: 'hist', ...target }, 'nextCursor');
      const events = all.flatMap((p) => p.events as Event[]);
      for (const p of all) expect(bytes(p), JSON.stringify(target)).toBeLessThan(64 * KiB);
      const last = events.at(-1);
      expect(last?.after.attributes_omitted ?? last?.after.attribute_writes_omitted).toBeTruthy();
    }
    // The last entity write's patch is what it said, whole.
    const entity = (await pages('history', { scope: 'hist', subject: 'Grower' }, 'nextCursor')).flatMap(
      (p) => p.events as Event[],
    );
    expect(JSON.stringify(entity.find((e) => JSON.stringify(e.patch).includes('big11'))?.patch)).toContain(
      'z'.repeat(20_000),
    );
  });
});

describe('memory_remember', () => {
  it('lists at most 100 rejected passages within 16 KiB, counting the rest and saying where they are', async () => {
    const long = 'M'.repeat(1000);
    const passages = Array.from({ length: 1000 }, (_, i) => ({
      text: `Note ${i} about nothing in particular.`,
      mentions: [`${long}${i}`],
      key: `k${String(i).padStart(4, '0')}${'x'.repeat(500)}`,
    }));
    passages[999] = { text: 'Quentin wrote the last one.', mentions: ['Quentin'], key: 'last' };
    const r = await post('remember', { scope: 'rej', passages });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.stored).toMatchObject({ passages: 1 });
    const rejected = r.body.rejected as { passage: number; key: string; reason: string }[];
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.length).toBeLessThanOrEqual(100);
    expect(bytes(rejected)).toBeLessThanOrEqual(16 * KiB);
    expect(rejected.map((e) => e.passage)).toEqual(rejected.map((_, i) => i));
    expect(rejected[0]?.reason).toContain('does not occur');
    expect(r.body.rejected_omitted).toBe(999 - rejected.length);
    expect(r.body.rejected_hint).toContain(`come after passage ${rejected.length - 1}`);
    expect(bytes(r.body)).toBeLessThan(24 * KiB);

    // The call's last passage alone, sent again: already stored, and nothing is rejected.
    const again = await post('remember', { scope: 'rej', passages: passages.slice(999) });
    expect(again.body).toMatchObject({ already: true, rejected: [] });
    expect(again.body.rejected_omitted).toBeUndefined();
  });

  it('lists the first 100 unlinked passages and counts the rest', async () => {
    const passages = Array.from({ length: 1000 }, (_, i) => ({ text: `plain words number ${i}`, mentions: [] }));
    const r = await post('remember', { scope: 'unl', passages });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.stored).toMatchObject({ passages: 1000 });
    expect(r.body.unlinked_passages).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(r.body.unlinked_passages_omitted).toBe(900);
    const few = await post('remember', { scope: 'unl2', passages: passages.slice(0, 3) });
    expect(few.body.unlinked_passages).toEqual([0, 1, 2]);
    expect(few.body.unlinked_passages_omitted).toBeUndefined();
  });
});

describe('delete_user', () => {
  it('lists at most 100 scopes, those that held the most, and sums what went in every one', async () => {
    const dan = (await t.token({ agent: 'claude', user: 'dan' })).token;
    for (let i = 0; i < 130; i++) {
      const scope = `d${String(i).padStart(3, '0')}`;
      const w = await post('note_write', { scope, key: 'k', value: 1, kind: 'user_fact' }, dan);
      expect(w.status).toBe(200);
    }
    // The scope holding the most is listed though it sorts last by name.
    await post('relate', { scope: 'zz-big', from: 'A', to: 'B', type: 'knows' }, dan);
    const r = await post('delete_user', { confirm: true }, dan);
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    const scopes = r.body.scopes as { scope: string }[];
    expect(scopes).toHaveLength(100);
    expect(scopes.at(-1)?.scope).toBe('zz-big');
    expect(scopes.map((s) => s.scope)).toEqual(scopes.map((s) => s.scope).sort());
    expect(r.body.scopes_omitted).toBe(31);
    expect(r.body.forgotten).toMatchObject({ notes: 130, entities: 2, facts: 1 });
    expect(bytes(r.body)).toBeLessThan(24 * KiB);
  });
});
