import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI } from './helpers.js';
import { startTestNode, type TestNode } from './node.js';

// A line a client writes to `cairn mcp` that is no JSON-RPC message is answered as JSON-RPC 2.0
// says (-32700 Parse error, -32600 Invalid Request), and the bridge goes on serving: the SDK's
// stdio transport dropped such a line without a word, and the client that wrote it waited forever.
// The lines are written by hand, since an SDK client never sends one.

let t: TestNode;
let child: ChildProcessWithoutNullStreams;
const lines: string[] = [];
let arrived: (() => void) | undefined;

beforeAll(async () => {
  t = await startTestNode();
  const { token } = await t.token({ agent: 'desktop' });
  child = spawn(process.execPath, [CLI, 'mcp', '--url', t.url], { env: { ...process.env, CAIRN_TOKEN: token } });
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    arrived?.();
  });
});
afterAll(async () => {
  child.kill();
  await t.stop();
});

/** The next line the bridge writes, parsed. */
async function reply(): Promise<Record<string, unknown>> {
  while (lines.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
  return JSON.parse(lines.shift() as string) as Record<string, unknown>;
}

/** Writes `text` and a newline to the bridge's stdin, and reads its next line. */
function send(text: string): Promise<Record<string, unknown>> {
  child.stdin.write(`${text}\n`);
  return reply();
}

const INITIALIZE =
  '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}';

it('answers a line that is not JSON with -32700 and id null, then serves the next lines', async () => {
  expect(await send('this is not json')).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: expect.stringMatching(/^Parse error: the line is not JSON/) },
  });
  expect(await send(INITIALIZE)).toMatchObject({ id: 0, result: { serverInfo: { name: 'cairn' } } });
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  expect(await send('{"jsonrpc":"2.0","id":1,"method":"ping"')).toMatchObject({ id: null, error: { code: -32700 } });
  const tools = await send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
  expect(tools).toMatchObject({ id: 2, result: { tools: expect.any(Array) } });
});

it.each([
  ['an empty array', '[]', null, /batch/],
  ['a batch of a valid request', '[{"jsonrpc":"2.0","id":3,"method":"ping"}]', null, /batch/],
  ['an object that is no message', '{"x":1}', null, /unknown member "x"/],
  ['a string', '"ping"', null, /a message is a JSON object/],
  ['a notification whose method is a number', '{"jsonrpc":"2.0","method":5}', null, /"method" must be a string/],
  ['a request of JSON-RPC 1.0', '{"jsonrpc":"1.0","id":4,"method":"ping"}', 4, /"jsonrpc" must be "2.0"/],
  ['a request with an unknown member', '{"jsonrpc":"2.0","id":"r5","method":"ping","x":1}', 'r5', /"x"/],
  ['a response without a result', '{"jsonrpc":"2.0","id":6}', null, /not a request/],
])('answers %s (%s) with -32600 Invalid Request, then serves the next line', async (_n, line, id, message) => {
  expect(await send(line)).toEqual({
    jsonrpc: '2.0',
    id,
    error: { code: -32600, message: expect.stringMatching(message) },
  });
  expect(await send('{"jsonrpc":"2.0","id":7,"method":"ping"}')).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
});

it('passes blank lines over and reads a message written in pieces', async () => {
  child.stdin.write('\n\r\n   \n{"jsonrpc":"2.0",');
  child.stdin.write('"id":8,"method":"ping"}\r\n');
  expect(await reply()).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
});
