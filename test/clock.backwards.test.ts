import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';

import { startNode } from '../ts/server/node.js';
import { tempDir } from './helpers.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// The wall clock stepped back while a node runs or before it starts (a VM restored, NTP correcting
// a clock that ran ahead, WSL after sleep): what is written after must still read as written after. The clock is
// outside the product, so it is the one thing mocked here.

let t: TestNode;
let token: string;

beforeAll(async () => {
  t = await startTestNode();
  token = (await t.token({ agent: 'claude', user: 'ana' })).token;
});
afterAll(() => t.stop());
afterEach(() => {
  vi.restoreAllMocks();
});

const post = (verb: string, body: object) => t.call('POST', `/v1/memory/${verb}`, { body, token });

/** Runs `write` with the wall clock an hour behind what it was. */
async function anHourEarlier<T>(write: () => Promise<T>): Promise<T> {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() - 3_600_000);
  try {
    return await write();
  } finally {
    vi.restoreAllMocks();
  }
}

it('resumes the capsule written last, though the clock stepped back between the two', async () => {
  expect((await post('handoff_create', { taskId: 'CLK-1', summary: 'first capsule' })).status).toBe(200);
  const second = await anHourEarlier(() => post('handoff_create', { taskId: 'CLK-1', summary: 'written after' }));
  expect(second.status).toBe(200);
  const resumed = await post('handoff_resume', { taskId: 'CLK-1' });
  expect(resumed.body.handoff).toMatchObject({ summary: 'written after' });
});

it("keeps a note's versions in order in time: updatedAt never before createdAt, history in order", async () => {
  expect((await post('note_write', { key: 'clk.note', kind: 'user_fact', value: 1 })).status).toBe(200);
  expect((await anHourEarlier(() => post('note_write', { key: 'clk.note', kind: 'user_fact', value: 2 }))).status).toBe(
    200,
  );
  const listed = await post('note_list', { key: 'clk.note' });
  const note = (listed.body.notes as { createdAt: string; updatedAt: string; value: unknown }[])[0];
  expect(note?.value).toBe(2);
  expect(Date.parse(note?.updatedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(note?.createdAt ?? ''));
  const history = await post('history', { key: 'clk.note' });
  const at = (history.body.events as { at: string }[]).map((e) => Date.parse(e.at));
  expect(at).toHaveLength(2);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
});

it('resumes the capsule written last when the node restarted with its clock an hour behind', async () => {
  const { dir, cleanup } = await tempDir('clock');
  const start = () => startNode({ dataDir: dir, port: 0, adminToken: ADMIN, logLevel: 'silent' });
  const handoff = (url: string, summary: string) =>
    fetch(`${url}/v1/memory/handoff_create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ taskId: 'CLK-2', summary }),
    });
  try {
    const before = await start();
    expect((await handoff(before.url, 'before the restart')).status).toBe(200);
    await before.close();
    const after = await anHourEarlier(async () => {
      const node = await start();
      expect((await handoff(node.url, 'after the restart')).status).toBe(200);
      return node;
    });
    const resumed = await fetch(`${after.url}/v1/memory/handoff_resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ taskId: 'CLK-2' }),
    });
    expect(((await resumed.json()) as { handoff: unknown }).handoff).toMatchObject({ summary: 'after the restart' });
    await after.close();
  } finally {
    await cleanup();
  }
});
