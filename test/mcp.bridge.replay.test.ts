import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { alive, bridgeToken, nodePid } from './bridge-node.js';
import { tempDir } from './helpers.js';
import { stdioBridge, toolJson } from './mcp-client.js';

// A `cairn mcp` bridge whose node made a keyed write durable and was killed (kill -9) before its
// reply reached the bridge: the bridge re-sends the write to a node it starts on the same store,
// which must replay the first receipt and write no second version or capsule. The node is killed
// exactly there by a preload (NODE_OPTIONS, inherited by the node the bridge starts) that kills
// its process when it is about to send the reply naming `KILLED` — after the write committed, with
// no byte of the reply sent. It does so once: a marker file keeps the next node alive.

/** The key (note) or task (handoff) whose reply the first node dies sending. */
const KILLED = 'replay/killed-before-reply';

/** The preload: kills the node when a reply (JSON or an event-stream chunk) names KILLED, once. */
const HOOK = `
const http = require('node:http');
const fs = require('node:fs');
const marker = process.env.CAIRN_TEST_KILLED_MARKER;
for (const name of ['write', 'end']) {
  const original = http.ServerResponse.prototype[name];
  http.ServerResponse.prototype[name] = function (chunk, ...rest) {
    if (chunk != null && typeof chunk !== 'function' && String(chunk).includes(${JSON.stringify(KILLED)})) {
      try {
        fs.writeFileSync(marker, String(process.pid), { flag: 'wx' });
        process.kill(process.pid, 'SIGKILL');
      } catch {}
    }
    return original.call(this, chunk, ...rest);
  };
}
`;

let dir: string;
let scratch: string;
let cleanups: (() => Promise<void>)[] = [];
let client: Client | undefined;

beforeEach(async () => {
  const data = await tempDir('bridge-replay');
  const other = await tempDir('bridge-replay-hook');
  dir = data.dir;
  scratch = other.dir;
  cleanups = [data.cleanup, other.cleanup];
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  const pid = nodePid(dir);
  if (pid !== undefined && alive(pid)) process.kill(pid, 'SIGKILL');
  for (const c of cleanups) await c();
});

/** A bridge on `dir` whose nodes run the preload; resolves with the marker the killed node leaves. */
async function bridge(name: string): Promise<{ marker: string; firstPid: number }> {
  const hook = join(scratch, 'kill-before-reply.cjs');
  writeFileSync(hook, HOOK);
  const marker = join(scratch, 'killed');
  const env = {
    CAIRN_TOKEN: await bridgeToken(dir),
    CAIRN_PORT: '0',
    CAIRN_NODE_WAIT_MS: '3000',
    NODE_OPTIONS: `--require ${hook}`,
    CAIRN_TEST_KILLED_MARKER: marker,
  };
  client = await stdioBridge(name, ['--data-dir', dir], env);
  return { marker, firstPid: nodePid(dir) as number };
}

const call = async (name: string, args: Record<string, unknown>) =>
  toolJson(await (client as Client).callTool({ name, arguments: args }));

/** The killed node's pid, checked to be the first node's and gone; a second node serves now. */
function expectKilled(marker: string, firstPid: number) {
  expect(Number(readFileSync(marker, 'utf8'))).toBe(firstPid);
  expect(alive(firstPid)).toBe(false);
  expect(nodePid(dir)).not.toBe(firstPid);
}

it('a note write with an idempotencyKey, applied by a node killed before it replied, is replayed by the next node: one version, its receipt', async () => {
  const { marker, firstPid } = await bridge('replay-note-test');
  const r = await call('memory_note_write', { kind: 'decision', key: KILLED, value: 'v1', idempotencyKey: 'k-1' });
  expectKilled(marker, firstPid);
  expect(r.isError, JSON.stringify(r.body)).toBe(false);
  // The node that answered stored nothing new: the receipt says so, as a model's own repeat's does.
  expect(r.body).toMatchObject({ key: KILLED, version: 1, replayed: true });
  const listed = await call('memory_note_list', {});
  expect(listed.body.notes).toEqual([expect.objectContaining({ id: r.body.id, key: KILLED, version: 1, value: 'v1' })]);
  const history = await call('memory_history', { key: KILLED });
  expect(history.body.events as unknown[]).toHaveLength(1);
  // The model's own repeat gets the same receipt.
  const again = await call('memory_note_write', { kind: 'decision', key: KILLED, value: 'v1', idempotencyKey: 'k-1' });
  expect(again.body).toEqual(r.body);
});

it('a note write sent without a key, applied by a node killed before it replied, is answered as written once', async () => {
  const { marker, firstPid } = await bridge('replay-unkeyed-test');
  const r = await call('memory_note_write', { kind: 'decision', key: KILLED, value: 'v1' });
  expectKilled(marker, firstPid);
  expect(r.isError, JSON.stringify(r.body)).toBe(false);
  // The bridge's own key: the model sent the call once, so its receipt is a first write's.
  expect(r.body).toMatchObject({ key: KILLED, version: 1 });
  expect(r.body.replayed).toBeUndefined();
  const history = await call('memory_history', { key: KILLED });
  expect(history.body.events as unknown[]).toHaveLength(1);
});

it('a handoff with an idempotencyKey, applied by a node killed before it replied, is replayed: one capsule', async () => {
  const { marker, firstPid } = await bridge('replay-handoff-test');
  const args = { taskId: KILLED, summary: 'half done', idempotencyKey: 'h-1' };
  const r = await call('memory_handoff_create', args);
  expectKilled(marker, firstPid);
  expect(r.isError, JSON.stringify(r.body)).toBe(false);
  expect(r.body.replayed).toBe(true);
  // The first capsule on the task: it replaced none.
  expect(r.body.replaces).toBeUndefined();
  const again = await call('memory_handoff_create', args);
  expect(again.body).toEqual(r.body);
  const resumed = await call('memory_handoff_resume', { taskId: KILLED });
  // The newest capsule is the one the receipt names: no second one was left after it.
  expect(resumed.body).toMatchObject({ state: 'resumed', handoff: { id: r.body.id, summary: 'half done' } });
});
