import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI } from './helpers.js';
import { startTestNode, type TestNode } from './node.js';

// Found by an audit: a number past a double's range (`1e400`) was stored as null. Over stdio the
// SDK parses the line into Infinity, which `cairn mcp` would forward as null: it refuses it as the
// node does over HTTP. The lines are written by hand, since an SDK client would send null itself.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

it('a tool call with 1e400 in its arguments is a tool error naming the field, and nothing is written', async () => {
  const { token } = await t.token({ agent: 'desktop' });
  const child = spawn(process.execPath, [CLI, 'mcp', '--url', t.url], {
    env: { ...process.env, CAIRN_TOKEN: token },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const replies = new Map<number, (reply: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const reply = JSON.parse(line) as { id?: number };
    if (typeof reply.id === 'number') replies.get(reply.id)?.(reply);
  });
  const request = (id: number, text: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      replies.set(id, resolve);
      child.stdin.write(`${text}\n`);
    });
  try {
    await request(
      0,
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}',
    );
    child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const before = await t.txn();
    const reply = await request(
      1,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_note_write","arguments":{"key":"inf","kind":"user_fact","value":{"e":1e400}}}}',
    );
    const result = reply.result as { isError: boolean; structuredContent: { error: unknown } };
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'value.e' }] });
    expect(await t.txn()).toBe(before);
  } finally {
    child.kill();
  }
});
