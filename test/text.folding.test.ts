import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContextReply } from '../ts/protocol/replies-knowledge.js';
import { startTestNode, type TestNode } from './node.js';

// What the full-text index and the name matcher treat as one word, seen over HTTP
// (docs/design/text.md): case, accents and NFC/NFD never make two terms of one word, in passages
// or notes, and a lowercase function word such as "may" never seeds "May Chen" alone.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  const remember = async (body: Record<string, unknown>) => {
    const r = await t.call('POST', '/v1/memory/remember', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  await remember({ content: 'Caf\u00e9 na\u00efve r\u00e9sum\u00e9', source: 'memo' });
  await remember({
    content: 'May Chen leads the harbour survey.',
    source: 'memo',
    facts: { entities: [{ name: 'May Chen', type: 'person' }] },
  });
});
afterAll(() => t.stop());

async function context(question: string) {
  const r = await t.call('POST', '/v1/memory/context', { body: { question } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  ContextReply.parse(r.body);
  return r.body as {
    state: string;
    items: { text: string }[];
    seeding: { seeds: { name: string; matched: string }[] };
  };
}

describe('full-text terms fold case, accents and NFC/NFD', () => {
  for (const question of ['cafe', 'Caf\u00e9', 'resume naive', 're\u0301sume\u0301 nai\u0308ve', 'CAFE\u0301']) {
    it(`finds the passage for ${JSON.stringify(question)}`, async () => {
      const c = await context(question);
      expect(c.state).toBe('answered');
      expect(c.items.map((i) => i.text)).toContain('Caf\u00e9 na\u00efve r\u00e9sum\u00e9');
    });
  }

  it('matches notes by folded terms and trigrams', async () => {
    const w = await t.call('POST', '/v1/memory/note_write', {
      body: { key: 'cv', value: { text: 'Caf\u00e9 na\u00efve r\u00e9sum\u00e9' }, kind: 'user_fact' },
    });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    for (const query of ['cafe', 're\u0301sume\u0301', 'NAIVE', 'resu']) {
      const r = await t.call('POST', '/v1/memory/note_list', { body: { query } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const keys = (r.body as { notes: { key: string }[] }).notes.map((n) => n.key);
      expect(keys, query).toEqual(['cv']);
    }
  });
});

describe('a function word seeds a name only when written as one', () => {
  const seeds = async (question: string) =>
    (await context(question)).seeding.seeds.map((s) => [s.name, s.matched] as [string, string]);

  for (const question of ['It may rain', 'May I ask about the weather?', 'Will it rain?', 'How long is it?']) {
    it(`seeds nothing for ${JSON.stringify(question)}`, async () => {
      expect(await seeds(question)).toEqual([]);
    });
  }

  it('seeds May Chen from her full name', async () => {
    expect(await seeds('Who is May Chen?')).toEqual([['May Chen', 'exact']]);
  });

  it('seeds May Chen from a capitalised May that names her', async () => {
    expect(await seeds('May said what?')).toEqual([['May Chen', 'word']]);
    expect(await seeds('What did May say?')).toEqual([['May Chen', 'word']]);
  });
});
