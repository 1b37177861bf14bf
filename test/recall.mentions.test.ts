import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// memory_recall of a name that stored text discusses but no entity holds: still `nothing_stored`
// (recall answers facts and never invents), with a count of the caller's passages naming it and
// a pointer to memory_context (an audit: a model told the user it knew nothing of Kenji).

let t: TestNode;
let alice: string;
let bob: string;

beforeAll(async () => {
  t = await startTestNode();
  alice = (await t.token({ agent: 'claude', user: 'alice' })).token;
  bob = (await t.token({ agent: 'claude', user: 'bob' })).token;
  const post = (token: string, body: object) => t.call('POST', '/v1/memory/remember', { token, body });
  const standup = await post(alice, {
    content:
      'Kenji Watanabe joined the lumen team in February. Kenji owns the plugin API and reviews all changes to src/plugins.',
    source: 'standup 2025-03-03',
  });
  expect(standup.body.stored).toMatchObject({ entities: 0, passages: 1 });
  await post(alice, { content: 'The release notes were drafted by KENJI  WATANABE last week.' });
  await post(bob, { content: 'Mariko Sato reviews the billing service.' });
  // An entity `passages` mentions is stored, with no fact.
  await post(alice, {
    passages: [{ text: 'Lena Fischer prefers tabs and reviews every Rust change.', mentions: ['Lena Fischer'] }],
  });
  await post(alice, { facts: { entities: [{ name: 'Omar Haddad', type: 'person' }], relations: [] } });
});
afterAll(async () => t.stop());

describe('memory_recall of a name only text mentions', () => {
  it('stays nothing_stored and counts the passages naming it, over MCP', async () => {
    const client = await mcpClient(t.url, alice);
    try {
      const r = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'Kenji Watanabe' } }));
      expect(r.isError).toBe(false);
      expect(r.body).toMatchObject({ state: 'nothing_stored', facts: [], text_mentions: { passages: 2 } });
      expect((r.body.text_mentions as { hint: string }).hint).toMatch(/memory_context/);
      const ctx = toolJson(
        await client.callTool({ name: 'memory_context', arguments: { question: 'Who owns the plugin API?' } }),
      );
      expect(JSON.stringify(ctx.body.items)).toContain('Kenji owns the plugin API');
    } finally {
      await client.close();
    }
  });

  it('adds nothing for a name no text of the caller names, nor for another user’s text', async () => {
    const post = (token: string, subject: string) => t.call('POST', '/v1/memory/recall', { token, body: { subject } });
    const nobody = await post(alice, 'Priya Raman');
    expect(nobody.body.state).toBe('nothing_stored');
    expect(nobody.body.text_mentions).toBeUndefined();
    // One word of the name is not the name: "Kenji" alone is in text, "Kenji Sato" is not.
    expect((await post(alice, 'Kenji Sato')).body.text_mentions).toBeUndefined();
    expect((await post(alice, 'Mariko Sato')).body.text_mentions).toBeUndefined();
    expect((await post(bob, 'Mariko Sato')).body.text_mentions).toMatchObject({ passages: 1 });
  });

  // Found in QA (session 48): a recall of an entity only passages name answered `facts: []` with
  // no pointer to them, which a model read as "nothing is known about Lena".
  it('points an answered recall that shows no fact to the passages naming the stored name', async () => {
    const post = (subject: string) => t.call('POST', '/v1/memory/recall', { token: alice, body: { subject } });
    const lena = await post('Lena');
    expect(lena.body).toMatchObject({ state: 'answered', facts: [], seeding: { name: 'Lena Fischer' } });
    expect(lena.body.text_mentions).toMatchObject({ passages: 1 });
    expect((lena.body.text_mentions as { hint: string }).hint).toMatch(/"Lena Fischer".*memory_context/);
    // An entity no text names, and one with facts, gain nothing.
    expect((await post('Omar Haddad')).body.text_mentions).toBeUndefined();
    await t.call('POST', '/v1/memory/relate', {
      token: alice,
      body: { from: 'Lena Fischer', to: 'Rust guild', type: 'member_of' },
    });
    const related = await post('Lena Fischer');
    expect(related.body.facts).toHaveLength(1);
    expect(related.body.text_mentions).toBeUndefined();
  });
});
