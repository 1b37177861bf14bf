import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// What memory_context's description promises of a reply's size with a pack, measured (found by
// an audit: it said "about twice the budget plus a few hundred bytes an item", and replies were
// 3.3–3.5 times the budget, a passage's text being in `context`, `item.text` and the citation).

let t: TestNode;
let token: string;
const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8');

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ann' })).token;
  for (let i = 1; i <= 12; i++) {
    const content =
      `Shipment ${i} of the Hub Corp widgets went to Oslo on pallet ${i}. ` +
      'The crates were inspected at the dock, counted twice, sealed and signed for by the night shift. '.repeat(6);
    const r = await t.call('POST', '/v1/memory/remember', { token, body: { content, source: `manifest-${i}` } });
    expect(r.status).toBe(200);
  }
});
afterAll(async () => t.stop());

it('a pack reply is about three times the budget plus a few hundred bytes an item, twice with compact', async () => {
  const client = await mcpClient(t.url, token);
  try {
    const { tools } = await client.listTools();
    const description = tools.find((x) => x.name === 'memory_context')?.description ?? '';
    expect(description).toContain(
      'about three times the budget plus a few hundred bytes an item (twice with `compact`',
    );
    for (const tokenBudget of [500, 2000]) {
      for (const compact of [false, true]) {
        const { isError, body } = toolJson(
          await client.callTool({
            name: 'memory_context',
            arguments: { question: 'Which shipments went to Oslo?', k: 100, tokenBudget, compact },
          }),
        );
        expect(isError).toBe(false);
        const items = (body.items as unknown[]).length;
        expect(items).toBeGreaterThan(0);
        const times = compact ? 2 : 3;
        const size = bytes(body);
        expect(size).toBeLessThanOrEqual(times * tokenBudget * 4 + 600 * items);
        // And the old claim ("about twice") did not hold without compact.
        if (!compact) expect(size).toBeGreaterThan(2 * tokenBudget * 4 * 0.8 + 300 * items);
      }
    }
  } finally {
    await client.close();
  }
});
