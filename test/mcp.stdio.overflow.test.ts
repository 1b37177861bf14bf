import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI } from './helpers.js';
import { startTestNode, type TestNode } from './node.js';

// Found by audits: a number past a double's range (`1e400`) was stored as null, one nearer 0 than
// a double holds (`1e-400`) as 0. Over stdio the SDK parses the line into Infinity or 0, which
// `cairn mcp` would forward as null or 0: it refuses them as the node does over HTTP. The lines are written by hand, since an SDK client would send null itself.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

it.each([
  ['1e400', '{"e":1e400}', 'value.e', /beyond ±1\.79/],
  // Found by an audit: JSON.parse makes a number nearer 0 than a double holds 0.
  ['1e-400', '{"e":[1,-2.5e-330]}', 'value.e.1', /nearer to 0 than ±4\.9e-324/],
])(
  'a tool call with %s in its arguments is a tool error naming the field, and nothing is written',
  async (_n, value, field, message) => {
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
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_note_write","arguments":{"key":"inf","kind":"user_fact","value":${value}}}}`,
      );
      const result = reply.result as { isError: boolean; structuredContent: { error: unknown } };
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field }] });
      expect((result.structuredContent.error as { message: string }).message).toMatch(message);
      expect(await t.txn()).toBe(before);
      // Zero however spelled, and a number near 0 a double holds, go through as sent.
      const zeros = '{"a":0,"b":-0.0,"c":0e-5,"d":5e-324,"s":"1e-400"}';
      const ok = await request(
        2,
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_note_write","arguments":{"key":"zeros","kind":"user_fact","value":${zeros}}}}`,
      );
      expect((ok.result as { isError?: boolean }).isError, JSON.stringify(ok)).toBeUndefined();
    } finally {
      child.kill();
    }
  },
);
