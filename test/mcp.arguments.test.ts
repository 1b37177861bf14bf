import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, stdioBridge, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// `arguments` that are not an object (found by an audit): a string (JSON encoded twice, as some
// hosts and models send it), an array or null were a JSON-RPC -32603 "internal error" carrying a
// raw zod dump. They are a VALIDATION_ERROR tool result naming `arguments`, on both transports,
// and nothing is written.

let t: TestNode;
let clients: [string, Client][];

beforeAll(async () => {
  t = await startTestNode();
  const { token } = await t.token({ agent: 'claude', user: 'ann' });
  clients = [
    ['http', await mcpClient(t.url, token)],
    ['stdio', await stdioBridge('args-test', ['--url', t.url], { CAIRN_TOKEN: token })],
  ];
});
afterAll(async () => {
  for (const [, c] of clients) await c.close();
  await t.stop();
});

const BAD: [string, unknown, RegExp][] = [
  ['a string', '{"key":"k","value":"v","kind":"user_fact"}', /got a string \(JSON sent as a string/],
  ['an array', ['k', 'v'], /got an array/],
  ['null', null, /got null/],
];

describe.each([0, 1])('tools/call over transport %i', (i) => {
  it.each(BAD)('with arguments %s is a VALIDATION_ERROR tool result', async (_, args, message) => {
    const [, client] = clients[i] as [string, Client];
    const before = await t.txn();
    const r = await client.request(
      { method: 'tools/call', params: { name: 'memory_note_write', arguments: args as Record<string, unknown> } },
      CallToolResultSchema,
    );
    const { isError, body } = toolJson(r);
    expect(isError).toBe(true);
    const error = (body as { error: { code: string; message: string; details: { field: string }[] } }).error;
    expect(error.code).toBe('VALIDATION_ERROR');
    expect(error.message).toMatch(message);
    expect(error.message).not.toMatch(/invalid_type|expected/);
    expect(error.details).toEqual([{ field: 'arguments', message: error.message }]);
    expect(await t.txn()).toBe(before);
  });

  it('absent arguments are still read as {}', async () => {
    const [, client] = clients[i] as [string, Client];
    const r = await client.request({ method: 'tools/call', params: { name: 'memory_status' } }, CallToolResultSchema);
    expect(toolJson(r).isError).toBe(false);
  });
});
