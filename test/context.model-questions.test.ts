import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by playing a model over MCP: two agents of one user keep a project's design decisions
// as text and facts, then ask memory_context what a model asks. Two replies misled it:
// - "Who owns the ledger service?" seeded every service by type from the "service" of the name,
//   and their `depends_on` facts took the top places: at `k: 2` the verdict was `related` with
//   "owns" uncovered, though "Priya Raman owns ledger service" was stored.
// - "Who owned the ledger service in March 2024?" read at `valid_at` 2024-03-15 returned the owner
//   of that day, yet left "March" and "2024" uncovered (`related`): told to say what is missing,
//   the model said the March owner was not stored.

let t: TestNode;
let claude: Client;
let codex: Client;
let token: string;

const SCOPE = 'payments';
const facts = {
  entities: [
    { name: 'ledger service', type: 'service' },
    { name: 'billing-api', type: 'service' },
    { name: 'fraud scorer', type: 'service' },
    { name: 'Priya Raman', type: 'person' },
  ],
  relations: [
    { source: 'billing-api', target: 'ledger service', type: 'depends_on' },
    { source: 'fraud scorer', target: 'ledger service', type: 'depends_on' },
    { source: 'Priya Raman', target: 'ledger service', type: 'owns' },
  ],
};

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  claude = await mcpClient(t.url, token);
  codex = await mcpClient(t.url, (await t.token({ agent: 'codex', user: 'ann' })).token);
  const content =
    'The billing-api depends on the ledger service. The fraud scorer depends on the ledger service too. ' +
    'Priya Raman owns the ledger service.';
  const remembered = toolJson(
    await claude.callTool({
      name: 'memory_remember',
      arguments: { scope: SCOPE, content, facts, date: '2024-01-15', source: 'design-notes' },
    }),
  );
  expect(remembered.isError).toBe(false);
  // In April the other agent records the new owner: the ledger service's `owned_by` replaced.
  const moved = toolJson(
    await codex.callTool({
      name: 'memory_relate',
      arguments: {
        scope: SCOPE,
        from: 'ledger service',
        to: 'Marco Bianchi',
        type: 'owned_by',
        replaces: true,
        date: '2024-04-01',
      },
    }),
  );
  expect(moved.body.ended).toHaveLength(1);
});
afterAll(async () => {
  for (const c of [claude, codex]) await c.close();
  await t.stop();
});

type Item = { text: string; valid_from?: string; valid_to?: string | null };
type Context = {
  grounding: { verdict: string; uncovered: string[] };
  items: Item[];
  seeding: { seeds: { matched: string }[] };
};

async function context(args: Record<string, unknown>): Promise<Context> {
  const { isError, body } = toolJson(
    await codex.callTool({ name: 'memory_context', arguments: { scope: SCOPE, ...args } }),
  );
  expect(isError).toBe(false);
  return body as unknown as Context;
}

it('a name holding a type word ("the ledger service") seeds no type: the owner comes first', async () => {
  const c = await context({ question: 'Who owns the ledger service?', k: 2 });
  expect(c.seeding.seeds.map((s) => s.matched)).toEqual(['exact']);
  expect(c.items.map((i) => i.text)).toEqual([
    'ledger service owned_by Marco Bianchi',
    'Marco Bianchi owns ledger service',
  ]);
  expect(c.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
  // A type word of its own still asks for the type's members.
  const which = await context({ question: 'Which services depend on the ledger service?', k: 2 });
  expect(which.items.map((i) => i.text).sort()).toEqual([
    'billing-api depends_on ledger service',
    'fraud scorer depends_on ledger service',
  ]);
  expect(which.grounding.verdict).toBe('grounded');
});

it('a fact read at valid_at covers the words naming that day, and no other', async () => {
  const march = await context({
    question: 'Who owned the ledger service in March 2024?',
    valid_at: '2024-03-15',
    k: 3,
  });
  expect(march.items[0]).toMatchObject({ text: 'Priya Raman owns ledger service', valid_to: '2024-04-01' });
  expect(march.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
  // Read now, the owner of today does not answer "in March 2024".
  const now = await context({ question: 'Who owned the ledger service in March 2024?', k: 3 });
  expect(now.items[0]?.text).toBe('ledger service owned_by Marco Bianchi');
  expect(now.grounding).toEqual({ verdict: 'related', uncovered: ['March', '2024'] });
  // Read at another day than the one asked about, the words asked stay uncovered.
  const other = await context({ question: 'Who owned the ledger service in February 2023?', valid_at: '2024-03-15' });
  expect(other.grounding).toEqual({ verdict: 'related', uncovered: ['February', '2023'] });
  // HTTP answers the same JSON.
  const body = { scope: SCOPE, question: 'Who owned the ledger service in March 2024?', valid_at: '2024-03-15', k: 3 };
  const http = await t.call('POST', '/v1/memory/context', { token, body });
  expect(http.body.grounding).toEqual(march.grounding);
  expect((http.body.items as Item[]).map((i) => i.text)).toEqual(march.items.map((i) => i.text));
});
