import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The wall clock stepped back while a node runs (a VM restored, NTP correcting a clock that ran
// ahead, WSL after sleep): what is written after must still read as written after. The clock is
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
