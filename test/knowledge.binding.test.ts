import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { rejection, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let store: Store;

const me = { tenant: 'local', user: 'u1', scope: 'default', agent: 'claude' };
const someoneElse = { ...me, user: 'u2' };

/** Code points of `text` from `start` to `end`: how citations count. */
function codePoints(text: string, start: number, end: number): string {
  return Array.from(text).slice(start, end).join('');
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('knowledge'));
  store = await Store.open(dir);
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

const CONTENT = 'Priya Raman 🎉 joined Acme in 2024. She leads the lighthouse project. Acme has its office in Zürich.';

describe('knowledge verbs through the binding', () => {
  it('remembers, recalls with verified citations, and answers a context', async () => {
    const body = {
      content: CONTENT,
      source: 'onboarding',
      date: '2024-05-01',
      facts: {
        entities: [
          { name: 'Priya Raman', type: 'person' },
          { name: 'Acme', type: 'company' },
        ],
        relations: [
          { source: 'Priya Raman', target: 'Acme', type: 'works_at' },
          { source: 'Acme', target: 'Zürich', type: 'located_in' },
        ],
      },
    };
    const stored = await store.knowledge('remember', me, body);
    expect(stored.stored).toEqual({ entities: 3, relations: 2, passages: 1 });
    expect(stored.doc_id).toMatch(/^\d+$/);
    expect(stored.meaning).toBe('not_armed');
    expect((await store.knowledge('remember', me, body)).already).toBe(true);

    const recall = (await store.knowledge('recall', me, { subject: 'priya' })) as {
      state: string;
      subject: { name: string; id: string };
      facts: Array<{
        relation: string;
        object: string;
        citation: { span: { text: string; start: number; end: number } };
      }>;
      seeding: { matched: string };
    };
    expect(recall.state).toBe('answered');
    expect(recall.subject.name).toBe('Priya Raman');
    expect(recall.subject.id).toMatch(/^\d+$/);
    expect(recall.seeding.matched).toBe('word');
    const works = recall.facts.find((f) => f.relation === 'works_at');
    expect(works?.object).toBe('Acme');
    const span = works?.citation.span;
    expect(span?.text).toBe('Priya Raman 🎉 joined Acme in 2024.');
    // Offsets are code points into the stored text: the emoji counts once.
    expect(span && codePoints(CONTENT, span.start, span.end)).toBe(span?.text);

    const context = (await store.knowledge('context', me, { question: 'What does Priya Raman lead?' })) as {
      state: string;
      grounding: { verdict: string };
      items: Array<{ kind: string; text: string; channels: string[]; citation: unknown }>;
    };
    expect(context.state).toBe('answered');
    expect(context.grounding.verdict).toBe('grounded');
    const passage = context.items.find((i) => i.kind === 'passage');
    expect(passage?.text).toBe(CONTENT);
    expect(passage?.channels).toContain('mentions');

    const status = (await store.knowledge('status', me, {})) as { scope: Record<string, number> };
    expect(status.scope).toEqual({ entities: 3, relations: 2, documents: 1, passages: 1, notes: 0, handoffs: 0 });
  });

  it('keeps users apart and refuses bad input by field', async () => {
    await store.knowledge('relate', me, { from: 'Priya Raman', to: 'Acme', type: 'works_at' });
    const theirs = await store.knowledge('recall', someoneElse, { subject: 'Pri' });
    expect(theirs.state).toBe('nothing_stored');
    expect(theirs.did_you_mean).toEqual([]);
    const mine = await store.knowledge('recall', me, { subject: 'Pri' });
    expect(mine.did_you_mean).toEqual(['Priya Raman']);
    const err = await rejection(store.knowledge('context', me, { question: 'x', hops: 9 }));
    expect(String(err)).toMatch(/hops/);
  });
  it('remembers passages whose texts cross beside the JSON as it remembers them inside it', async () => {
    const passages = [
      { text: 'Jonas Weber runs the Berlin office 🎉 "quoted" \\ back\nslash.', mentions: ['Jonas Weber'], key: 'a' },
      { text: 'The canteen serves soup.', mentions: ['Jonas'] },
      { text: 'Zürich has a lake.', mentions: [] },
    ];
    const other = { ...me, scope: 'other' };
    const split = await store.knowledge('remember', me, { passages, date: '2024-05-01' });
    // A passage that is not a plain object sends the whole body as JSON (the path before).
    const asJson = await store.knowledge('remember', other, {
      passages: [...passages.slice(0, 2), Object.assign(Object.create({ inherited: 1 }), passages[2])],
      date: '2024-05-01',
    });
    expect(split.stored).toEqual({ entities: 1, relations: 0, passages: 2 });
    expect(split.rejected).toEqual(asJson.rejected);
    expect(split.stored).toEqual(asJson.stored);
    const question = { question: 'Who runs the Berlin office?' };
    const a = (await store.knowledge('context', me, question)) as { items: Array<{ text: string }> };
    const b = (await store.knowledge('context', other, question)) as { items: Array<{ text: string }> };
    expect(a.items.map((i) => i.text)).toEqual(b.items.map((i) => i.text));
    expect(a.items.map((i) => i.text)).toContain(passages[0]?.text);
    expect((await store.knowledge('remember', me, { passages, date: '2024-05-01' })).already).toBe(true);
    // Text that is not well-formed UTF-16 still goes as JSON, and is refused by field as before.
    const err = await rejection(store.knowledge('remember', me, { passages: [{ text: 'a\ud800b', mentions: [] }] }));
    expect(String(err)).toMatch(/remember/);
    // A text that is not a string is refused by the engine as before.
    const bad = await rejection(store.knowledge('remember', me, { passages: [{ text: 5, mentions: [] }] }));
    expect(String(bad)).toMatch(/remember/);
  });

  it('loads an export as JSON lines into an empty scope, and refuses a scope holding knowledge', async () => {
    await store.knowledge('remember', me, {
      facts: {
        entities: [{ name: 'Acme', type: 'company' }],
        relations: [{ source: 'Priya Raman', target: 'Acme', type: 'works_at' }],
      },
    });
    const page = (await store.knowledge('export', me, {})) as { records: unknown[] };
    const lines = Buffer.from(page.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const copy = { ...me, scope: 'copy' };
    const loaded = await store.load(copy, lines);
    expect(loaded.imported).toEqual({ entities: 2, facts: 1, documents: 0, notes: 0, handoffs: 0 });
    expect(loaded.skipped).toEqual([]);
    const recall = (await store.knowledge('recall', copy, { subject: 'acme' })) as {
      state: string;
      facts: Array<{ subject: string; relation: string }>;
    };
    expect(recall.state).toBe('answered');
    expect(recall.facts.map((f) => `${f.subject} ${f.relation}`)).toEqual(['Priya Raman works_at']);
    const again = (await store.load(copy, lines)) as { error?: { code: string } };
    expect(again.error?.code).toBe('VALIDATION_ERROR');
  });

  it('loads the bytes of a view into a larger buffer, and only those (the engine reads them in place)', async () => {
    const record = '{"kind":"entity","id":"1","name":"Viewed","types":["person"]}\n';
    const around = Buffer.from(`{"kind":"entity","id":"2","name":"Before"}\n${record}{"kind":"entity","name":"After"}`);
    const start = around.indexOf(record);
    const view = new Uint8Array(around.buffer, around.byteOffset + start, record.length);
    const scope = { ...me, scope: 'view' };
    const loaded = await store.load(scope, view);
    expect(loaded.imported).toEqual({ entities: 1, facts: 0, documents: 0, notes: 0, handoffs: 0 });
    const names = ['Viewed', 'Before', 'After'].map(async (subject) => {
      const r = (await store.knowledge('recall', scope, { subject })) as { state: string };
      return `${subject} ${r.state}`;
    });
    expect(await Promise.all(names)).toEqual(['Viewed answered', 'Before nothing_stored', 'After nothing_stored']);
  });

  it('answers a recall on the event loop when nothing else is in flight, and through the pool beside another call', async () => {
    await store.knowledge('remember', me, {
      facts: { relations: [{ source: 'Priya Raman', target: 'Acme', type: 'works_at' }] },
    });
    const caller = { ...me, now: Date.now() };
    const body = Buffer.from(JSON.stringify({ subject: 'Priya Raman' }));
    // The first verb after the first record writes the scope's counts once: a read that must
    // write goes to the pool, as one that runs out of time does.
    const first = store.inner.knowledge('recall', caller, body);
    expect(first).toBeInstanceOf(Promise);
    await first;
    const here = store.inner.knowledge('recall', caller, body);
    expect(here).toBeInstanceOf(Buffer);
    // A write of many passages (tens of milliseconds, never tried on the loop) is on the pool:
    // the recall beside it goes there too, so calls in flight together spread over the cores.
    const passages = Array.from({ length: 300 }, (_, i) => ({
      text: `Note ${i} on the lighthouse project.`,
      mentions: [],
    }));
    const beside = store.inner.knowledge('remember', caller, Buffer.from(JSON.stringify({ passages })));
    const pooled = store.inner.knowledge('recall', caller, body);
    expect(pooled).toBeInstanceOf(Promise);
    await beside;
    expect((await pooled).toString()).toBe((here as Buffer).toString());
    const reply = JSON.parse((here as Buffer).toString()) as { state: string; facts: Array<{ object: string }> };
    expect(reply.state).toBe('answered');
    expect(reply.facts.map((f) => f.object)).toEqual(['Acme']);
  });

  it('refuses a bad caller of a quick read at once, as a store error', () => {
    const body = Buffer.from(JSON.stringify({ subject: 'Priya Raman' }));
    expect(() => store.inner.knowledge('recall', { ...me, now: -1 }, body)).toThrow(/now must be/);
  });
});
