import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Ids are decimal strings (DESIGN §2), and a model that read `"id": "11"` often sends it back as
// the number 11. Found by a review from a model's side: that was refused as "Invalid input:
// expected string, received number", which says neither that ids are strings nor how to write
// one. It says both, and nothing is written.

let t: TestNode;
let client: Client;

beforeAll(async () => {
  t = await startTestNode();
  client = await mcpClient(t.url, (await t.token({ agent: 'claude', user: 'ann' })).token);
});
afterAll(async () => {
  await client.close();
  await t.stop();
});

it.each([
  ['memory_forget', { passage: 9 }, 'passage', '"9"'],
  ['memory_forget', { fact: { id: 11 } }, 'fact.id', '"11"'],
  ['memory_history', { fact: { id: 11 } }, 'fact.id', '"11"'],
])('%s with %j names %s and says ids are strings (%s)', async (name, args, field, id) => {
  const before = await t.txn();
  const { isError, body } = toolJson(await client.callTool({ name, arguments: args }));
  expect(isError).toBe(true);
  const message = `an id is a decimal string (${id}), not a JSON number`;
  expect(body).toEqual({
    error: { code: 'VALIDATION_ERROR', message: `${field}: ${message}`, details: [{ field, message }] },
  });
  expect(await t.txn()).toBe(before);
});
