import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The black-box audit of issue 3 item 10, replayed through a real node: after a forget, nothing
// of what went is readable through any verb, history and audit included.

let t: TestNode;
let token: string;

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude' })).token;
});
afterAll(() => t.stop());

const post = async (verb: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const r = await t.call('POST', `/v1/memory/${verb}`, { token, body, headers });
  return { status: r.status, body: r.body as Record<string, unknown>, text: JSON.stringify(r.body) };
};

describe('forgetting leaves nothing behind', () => {
  it('a forgotten subject is not spelled by history or audit', async () => {
    const remembered = await post('remember', {
      scope: 'fg',
      content: 'Marcus Feld founded Nimbus Labs in Oslo.',
      facts: { relations: [{ source: 'Marcus Feld', target: 'Nimbus Labs', type: 'founded' }] },
    });
    expect(remembered.status).toBe(200);
    expect((await post('audit', { scope: 'fg' })).text).toContain('Marcus Feld');
    const gone = await post('forget', { scope: 'fg', subject: 'Marcus Feld' });
    expect(gone.body.state).toBe('forgotten');
    const audit = await post('audit', { scope: 'fg' });
    expect(audit.status).toBe(200);
    expect(audit.text).not.toMatch(/marcus|feld/i);
    expect(audit.text).toContain('Nimbus Labs');
    const history = await post('history', { scope: 'fg', subject: 'Marcus Feld' });
    expect(history.body.events).toEqual([]);
    expect((await post('forget', { scope: 'fg', subject: 'Marcus Feld' })).body.state).toBe('already_forgotten');
  });

  it('forget {all} takes the notes, handoffs and history of the scope, and counts them', async () => {
    const scope = { scope: 'pack' };
    await post('remember', { ...scope, content: 'Ada Quist ships the packer.' });
    expect(
      (await post('note_write', { ...scope, key: 'pknote', value: { text: 'zephyrine plan' }, kind: 'decision' }))
        .status,
    ).toBe(200);
    const made = await post('handoff_create', { ...scope, taskId: 'PK', summary: 'capsule quokkaline' });
    expect(made.status).toBe(200);
    const reply = await post('forget', { ...scope, all: true });
    expect(reply.body).toMatchObject({ state: 'forgotten', forgotten: { notes: 1, handoffs: 1 }, kept: [] });
    const reads = [
      await post('note_list', scope),
      await post('note_list', { ...scope, query: 'zephyrine' }),
      await post('handoff_resume', { ...scope, taskId: 'PK' }),
      await post('context', { ...scope, question: 'zephyrine plan quokkaline' }),
      await post('history', { ...scope, key: 'pknote' }),
      await post('audit', scope),
    ];
    for (const r of reads) {
      expect(r.status).toBe(200);
      expect(r.text).not.toMatch(/zephyrine|quokkaline|pknote|Ada Quist/);
    }
    expect(reads[2]?.body.state).toBe('none');
    expect((await post('forget', { ...scope, all: true })).body.state).toBe('already_forgotten');
  });

  it('delete_user takes notes, handoffs and note history of every scope', async () => {
    const u9 = { 'x-cairn-user': 'u9' };
    for (const scope of ['default', 'side']) {
      expect(
        (await post('note_write', { scope, key: 'u9note', value: 'marzipanic', kind: 'user_fact' }, u9)).status,
      ).toBe(200);
      expect((await post('handoff_create', { scope, taskId: 'U9', summary: 'capsule velvetish' }, u9)).status).toBe(
        200,
      );
    }
    await post('remember', { content: 'Odile Varga wrote the u9 manual.' }, u9);
    const reply = await post('delete_user', { confirm: true }, u9);
    expect(reply.body.state).toBe('forgotten');
    for (const s of reply.body.scopes as { forgotten: Record<string, number> }[]) {
      expect(s.forgotten).toMatchObject({ notes: 1, handoffs: 1 });
    }
    for (const scope of ['default', 'side']) {
      for (const [verb, body] of [
        ['note_list', {}],
        ['handoff_resume', { taskId: 'U9' }],
        ['history', { key: 'u9note' }],
        ['audit', {}],
      ] as const) {
        const r = await post(verb, { scope, ...body }, u9);
        expect(r.status).toBe(200);
        expect(r.text).not.toMatch(/marzipanic|velvetish|Odile/);
      }
    }
  });

  it('an attribute forget says so in the entity history, and nothing names the key', async () => {
    const scope = { scope: 'attr' };
    const facts = { entities: [{ name: 'Ivo Petrov', type: 'person', attributes: { eyes: 'grey', role: 'pilot' } }] };
    expect((await post('remember', { ...scope, facts })).status).toBe(200);
    const gone = await post('forget', { ...scope, attribute: { subject: 'Ivo Petrov', key: 'eyes' } });
    expect(gone.body.state).toBe('forgotten');
    const history = await post('history', { ...scope, subject: 'Ivo Petrov' });
    const ops = (history.body.events as { op: string }[]).map((e) => e.op);
    expect(ops).toEqual(['create', 'forget_attribute']);
    expect(history.text).toContain('pilot');
    const audit = await post('audit', scope);
    expect(`${history.text}${audit.text}`).not.toMatch(/eyes|grey/);
  });
});
