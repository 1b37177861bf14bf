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
});
