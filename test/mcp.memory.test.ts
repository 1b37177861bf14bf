import v8 from 'node:v8';
import vm from 'node:vm';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// A session an agent keeps open all day makes tens of thousands of tool calls: the node must not
// keep anything of a call once it has answered it. The client and the node share this process,
// so the heap measured is both of theirs.

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * The heap in use after a full collection, in bytes. Collected twice, with a turn of the event
 * loop between: finalizers (Node's fetch registers some per request) run only after a collection.
 */
async function heapAfterGc(): Promise<number> {
  gc();
  await new Promise((r) => setTimeout(r, 20));
  gc();
  return process.memoryUsage().heapUsed;
}

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 1e9 });
});

afterAll(async () => {
  await t.stop();
});

it('holds no memory per tool call on a long session', async () => {
  const { token } = await t.token({ agent: 'long-session', user: 'ann' });
  const client = await mcpClient(t.url, token);
  const facts = {
    entities: [{ name: 'Ada Lovelace', type: 'person' }],
    relations: [{ source: 'Ada Lovelace', target: 'Charles Babbage', type: 'works_with' }],
  };
  expect(toolJson(await client.callTool({ name: 'memory_remember', arguments: { facts } })).isError).toBe(false);
  const recall = async () => {
    const r = toolJson(await client.callTool({ name: 'memory_recall', arguments: { subject: 'Ada Lovelace' } }));
    expect(r.body.state).toBe('answered');
  };
  // Warm: caches filled and code compiled before the first measure.
  for (let i = 0; i < 1000; i++) await recall();
  const before = await heapAfterGc();
  const CALLS = 2000;
  for (let i = 0; i < CALLS; i++) await recall();
  const grown = (await heapAfterGc()) - before;
  await client.close();
  // The SDK's JSON-mode leak (mcp-answered.ts) kept ~8 KB a call: 16 MB here. Without it the
  // heap moves by ~1 MB over these calls (the collector, compiled code), whatever their number.
  expect(grown).toBeLessThan(CALLS * 2048);
});
