import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// handoff_create's limits say one thing in both validation layers (the node's schema and the
// notes engine): an item of `decisions` & co. is at most 4096 bytes of text (not counting JSON
// quotes), its field spelled `decisions.0` as every array item of the API is; a capsule over
// 64 KiB as a whole names the body, not `summary`; `to` must be an agent name a token can hold.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

const create = (extra: Record<string, unknown>) =>
  t.call('POST', '/v1/memory/handoff_create', { body: { taskId: 'L1', summary: 's', ...extra } });

function refusal(r: Awaited<ReturnType<typeof create>>) {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error?.code).toBe('VALIDATION_ERROR');
  return r.body.error?.details[0] as { field: string; message: string };
}

it('an item of 4096 bytes passes, 4097 is refused as decisions.0', async () => {
  for (const n of [4094, 4095, 4096]) expect((await create({ decisions: ['x'.repeat(n)] })).status).toBe(200);
  // Multi-byte text counts its UTF-8 bytes: 2045 × "é" (2 bytes) + 6 = 4096.
  expect((await create({ nextSteps: [`${'é'.repeat(2045)}123456`] })).status).toBe(200);
  expect(refusal(await create({ decisions: ['x'.repeat(4097)] })).field).toBe('decisions.0');
  expect(refusal(await create({ blockers: ['ok', `${'é'.repeat(2048)}x`] })).field).toBe('blockers.1');
  // An object item is counted serialised, by the engine; its refusal is spelled the same way.
  const big = refusal(await create({ artifacts: [{ path: 'x'.repeat(4096) }] }));
  expect(big).toEqual({ field: 'artifacts.0', message: expect.stringMatching(/^is 4107 bytes; at most 4096/) });
});

it('a capsule too large as a whole names the capsule, not summary', async () => {
  const r = refusal(await create({ decisions: Array.from({ length: 20 }, () => 'x'.repeat(4000)) }));
  expect(r.field).toBe('(body)');
  expect(r.message).toMatch(/^the capsule .* is \d+ bytes serialised; at most 65536$/);
  expect(r.message).not.toMatch(/^summary/);
});

it('to must be an agent name: a typo would reach nobody', async () => {
  for (const to of ['not an agent name!!', '-codex', 'codex/1', 'x'.repeat(129)]) {
    expect(refusal(await create({ to })).field, to).toBe('to');
  }
  const ok = await create({ to: 'codex-2.b_c' });
  expect(ok.status).toBe(200);
  expect(ok.body).toMatchObject({ to: 'codex-2.b_c' });
});
