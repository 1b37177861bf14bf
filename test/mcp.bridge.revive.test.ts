import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { alive, bridgeToken, nodePid } from './bridge-node.js';
import { tempDir } from './helpers.js';
import { stdioBridge, toolJson } from './mcp-client.js';

// A `cairn mcp` bridge given a data dir (no --url) starts a node there when none runs, and again
// when that node is gone (killed, out of memory): a desktop client holds the bridge for hours,
// and the agent cannot start a node itself (the failure audit's F7).

let dir: string;
let cleanup: () => Promise<void>;
let client: Client | undefined;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('bridge-revive'));
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  const pid = nodePid(dir);
  if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
  await cleanup();
});

const write = async (key: string) =>
  toolJson(
    await (client as Client).callTool({
      name: 'memory_note_write',
      arguments: { kind: 'decision', key, value: key },
    }),
  );

it('a bridge whose node was killed starts one again on the next call, and the call succeeds', async () => {
  // CAIRN_PORT=0: the nodes it starts take any free port (never 4000), found through node.json.
  const env = { CAIRN_TOKEN: await bridgeToken(dir), CAIRN_PORT: '0', CAIRN_NODE_WAIT_MS: '3000' };
  client = await stdioBridge('revive-test', ['--data-dir', dir], env);
  expect((await write('before')).isError).toBe(false);
  const first = nodePid(dir) as number;
  process.kill(first, 'SIGKILL');
  while (alive(first)) await new Promise((r) => setTimeout(r, 20));

  const started = Date.now();
  const after = await write('after');
  expect(after.isError, JSON.stringify(after.body)).toBe(false);
  expect(Date.now() - started).toBeLessThan(3000);
  const second = nodePid(dir) as number;
  expect(second).not.toBe(first);
  expect(alive(second)).toBe(true);
  // The new node serves the same store: the write acknowledged before the kill is there.
  const listed = toolJson(await client.callTool({ name: 'memory_note_list', arguments: {} }));
  expect(JSON.stringify(listed.body)).toContain('"before"');
});

// Found by QA: the write was answered "outcome unknown" naming a key, though a re-send to a node
// the bridge starts is as safe as the model's repeat with that key: the node keeps the key in the
// write's own transaction, so it replays a write that ran and applies one that did not.
it('a keyed write in flight when the node dies is re-sent to a node the bridge starts, and applied once', async () => {
  const env = { CAIRN_TOKEN: await bridgeToken(dir), CAIRN_PORT: '0', CAIRN_NODE_WAIT_MS: '3000' };
  client = await stdioBridge('revive-inflight-test', ['--data-dir', dir], env);
  expect((await write('warm')).isError).toBe(false);
  const first = nodePid(dir) as number;
  // Stopped, the node never reads the write; killed, its connection is cut with the write unanswered.
  process.kill(first, 'SIGSTOP');
  const pending = write('cut');
  await new Promise((r) => setTimeout(r, 300));
  process.kill(first, 'SIGKILL');
  const cut = await pending;
  expect(cut.isError, JSON.stringify(cut.body)).toBe(false);
  // An ordinary receipt: the model sent the call once.
  expect(cut.body).toMatchObject({ version: 1 });
  expect(cut.body.replayed).toBeUndefined();
  const second = nodePid(dir) as number;
  expect(second).not.toBe(first);
  expect(alive(second)).toBe(true);
  const history = toolJson(await client.callTool({ name: 'memory_history', arguments: { key: 'cut' } }));
  expect((history.body.events as unknown[]).length).toBe(1);
});

it('a write that no repeat makes safe, cut by the node dying, is not re-sent: its outcome is unknown, and the next call starts a node', async () => {
  const env = { CAIRN_TOKEN: await bridgeToken(dir), CAIRN_PORT: '0', CAIRN_NODE_WAIT_MS: '3000' };
  client = await stdioBridge('revive-unsafe-test', ['--data-dir', dir], env);
  expect((await write('warm')).isError).toBe(false);
  const first = nodePid(dir) as number;
  process.kill(first, 'SIGSTOP');
  const pending = client.callTool({ name: 'memory_relate', arguments: { from: 'Ann', type: 'knows', to: 'Bo' } });
  await new Promise((r) => setTimeout(r, 300));
  process.kill(first, 'SIGKILL');
  const cut = toolJson(await pending);
  expect(cut.isError).toBe(true);
  const error = cut.body.error as { code: string; message: string; details: unknown[] };
  expect(error.code).toBe('UNAVAILABLE');
  expect(error.details).toEqual([{ applied: 'unknown' }]);
  expect(error.message).toContain('Check what is stored before repeating it');
  // No node was started for it; the next call starts one.
  expect(nodePid(dir)).toBe(first);
  expect((await write('after')).isError).toBe(false);
  expect(nodePid(dir)).not.toBe(first);
});
