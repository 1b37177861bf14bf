import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// The tool schemas a node serves, read by a strict validator the way strict MCP clients read them
// (an audit: union `type` needs Ajv's allowUnionTypes, `propertyNames` and `const` are dropped or
// refused by limited dialects, and a `value` without a type was offered to a model as a string).

let t: TestNode;
let token: string;
let tools: { name: string; inputSchema: Record<string, unknown> }[];

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude' })).token;
  const client = await mcpClient(t.url, token);
  try {
    tools = (await client.listTools()).tools as typeof tools;
  } finally {
    await client.close();
  }
});
afterAll(async () => t.stop());

/** Every schema node of `s` with its path. */
function* nodes(s: unknown, path: string): Generator<[string, Record<string, unknown>]> {
  if (Array.isArray(s)) for (const [i, x] of s.entries()) yield* nodes(x, `${path}/${i}`);
  else if (s !== null && typeof s === 'object') {
    yield [path, s as Record<string, unknown>];
    for (const [k, v] of Object.entries(s)) yield* nodes(v, `${path}/${k}`);
  }
}

describe('tool input schemas', () => {
  it('compile under Ajv strict mode, with no union type, propertyNames or const', () => {
    expect(tools.length).toBe(15);
    const ajv = new Ajv2020({ strict: true });
    for (const tool of tools) {
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
      for (const [path, node] of nodes(tool.inputSchema, tool.name)) {
        if (path.endsWith('/properties')) continue; // names, not keywords
        expect(Array.isArray(node.type), path).toBe(false);
        expect('propertyNames' in node, path).toBe(false);
        expect('const' in node, path).toBe(false);
      }
    }
  });

  it('type note_write.value as any JSON value but null, and the node stores an object as an object', async () => {
    const write = tools.find((tool) => tool.name === 'memory_note_write');
    if (write === undefined) throw new Error('memory_note_write is not served');
    const value = (write.inputSchema.properties as Record<string, { anyOf?: { type: string }[] }>).value;
    expect(value?.anyOf?.map((b) => b.type)).toEqual(['object', 'array', 'string', 'number', 'boolean']);
    const validate = new Ajv2020({ strict: true }).compile(write.inputSchema);
    for (const v of [{ a: 1 }, [1], 'x', 1.5, true])
      expect(validate({ key: 'k', kind: 'decision', value: v })).toBe(true);
    expect(validate({ key: 'k', kind: 'decision', value: null })).toBe(false);

    const client = await mcpClient(t.url, token);
    try {
      const args = { key: 'db_choice', kind: 'decision', value: { db: 'sqlite', why: ['local'] } };
      expect(toolJson(await client.callTool({ name: 'memory_note_write', arguments: args })).isError).toBe(false);
      const list = toolJson(await client.callTool({ name: 'memory_note_list', arguments: { key: 'db_choice' } }));
      expect((list.body.notes as { value: unknown }[])[0]?.value).toEqual(args.value);
    } finally {
      await client.close();
    }
  });

  it('still refuses what the dropped keywords said: an empty attribute name, a forget `all` of false', async () => {
    const empty = await t.call('POST', '/v1/memory/relate', {
      token,
      body: { from: 'A', to: 'B', type: 'knows', attributes: { '': 1 } },
    });
    expect(empty.status).toBe(422);
    const notAll = await t.call('POST', '/v1/memory/forget', { token, body: { all: false } });
    expect(notAll.status).toBe(422);
    expect(notAll.body.error?.message).toMatch(/all/);
  });
});
