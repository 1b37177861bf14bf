import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found by playing a model: asked to forget what came from the infra notes, it sent
// `forget {source: "infra-note"}` (or "Infra-Notes"), got a bare NOT_FOUND, "nothing is stored
// from source", and told the user there was nothing to forget, while `infra-notes` held it. The
// refusal now names the labels of the caller's scope it may mean, as a subject's does.

let t: TestNode;
let ann: Client;
let bob: Client;

beforeAll(async () => {
  t = await startTestNode();
  ann = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'ann' })).token);
  bob = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'bob' })).token);
  for (const [source, content] of [
    ['infra-notes', 'The Kafka cluster is run by the platform team.'],
    ['adr-007', 'The fraud scorer calls the ledger service over gRPC.'],
  ]) {
    const r = await call(ann, 'memory_remember', { content, source });
    expect(r.isError).toBe(false);
  }
  expect(
    (await call(ann, 'memory_relate', { from: 'Wen Li', to: 'Kafka', type: 'runs', source: 'oncall' })).isError,
  ).toBe(false);
});
afterAll(async () => {
  for (const c of [ann, bob]) await c.close();
  await t.stop();
});

async function call(client: Client, name: string, args: Record<string, unknown>) {
  return toolJson(await client.callTool({ name, arguments: { scope: 'infra', ...args } }));
}

type Refusal = { error: { code: string; message: string; details: unknown[] } };

it('a source label that stored nothing names the labels it may mean; nothing goes', async () => {
  // A label like none is offered nothing. (The first forget of a store also builds its source
  // index once, `build_once.rs`: the transaction id is read after it.)
  const none = await call(ann, 'memory_forget', { source: 'quarterly-report' });
  expect((none.body as Refusal).error.details).toEqual([]);
  const before = await t.txn();
  for (const [sent, meant] of [
    ['infra-note', 'infra-notes'],
    ['Infra-Notes', 'infra-notes'],
    ['adr-07', 'adr-007'],
    ['oncal', 'oncall'],
  ]) {
    const { isError, body } = await call(ann, 'memory_forget', { source: sent });
    expect(isError).toBe(true);
    expect((body as Refusal).error).toEqual({
      code: 'NOT_FOUND',
      message: `nothing is stored from source "${sent}"`,
      details: [{ did_you_mean: meant }],
    });
  }
  expect(await t.txn()).toBe(before);
  // Another user is offered nothing of ann's.
  const theirs = await call(bob, 'memory_forget', { source: 'infra-note' });
  expect((theirs.body as Refusal).error.details).toEqual([]);
  // Sent back as offered, the source is forgotten.
  const gone = await call(ann, 'memory_forget', { source: 'infra-notes' });
  expect(gone.body.state).toBe('forgotten');
  const again = await call(ann, 'memory_forget', { source: 'infra-note' });
  expect((again.body as Refusal).error.details).toEqual([]);
});
