import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';

import { Store } from '../ts/engine/store.js';
import { tempDir } from './helpers.js';
import { startTestNode, type TestNode } from './node.js';

// An idempotencyKey is remembered for the node's window (CAIRN_IDEMPOTENCY_HOURS), not for ever:
// the `cairn mcp` bridge keys every write, and each record would otherwise stay.

let t: TestNode;
let claude: string;

beforeAll(async () => {
  t = await startTestNode({ idempotencyHours: 1 });
  claude = (await t.token({ agent: 'claude', user: 'ana' })).token;
});
afterAll(() => t.stop());
afterEach(() => {
  vi.useRealTimers();
});

const write = (body: object) => t.call('POST', '/v1/memory/note_write', { body, token: claude });

it('a retry inside the window replays; one after it writes anew', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  const body = { key: 'deploy.window', value: 'friday', kind: 'decision', idempotencyKey: 'bridge-1' };
  const first = await write(body);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  vi.setSystemTime(Date.now() + 59 * 60_000);
  expect((await write(body)).body).toEqual({ ...first.body, replayed: true });
  vi.setSystemTime(Date.now() + 2 * 60_000);
  const anew = await write(body);
  expect(anew.status).toBe(200);
  // Written anew, not replayed: the same value changes nothing, so no new version (notes.md).
  expect(anew.body).toMatchObject({ key: 'deploy.window', version: 1, unchanged: true });
  expect(anew.body.replayed).toBeUndefined();
});

it('a store refuses a window outside 1–8760 hours and opens nothing', async () => {
  const { dir, cleanup } = await tempDir('idem-window');
  try {
    for (const idempotencyHours of [0, 1.5, 8761]) {
      await expect(Store.open(`${dir}/store`, { idempotencyHours })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('idempotencyHours must be a whole number of hours, 1–8760'),
      });
    }
  } finally {
    await cleanup();
  }
});
