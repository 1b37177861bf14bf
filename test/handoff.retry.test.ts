import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startNode } from '../ts/server/node.js';
import { tempDir } from './helpers.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// What an agent handing work over relies on beyond the happy path (found by an audit of notes
// and handoffs with several agents): a create retried after a network error leaves one capsule.

let t: TestNode;
let claude: string;

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ana' })).token;
});
afterAll(() => t.stop());

const post = (verb: string, body: object, token = claude) => t.call('POST', `/v1/memory/${verb}`, { body, token });

/** The capsules of `taskId` a listing of everything addressed to `to` shows. */
async function addressedTo(token: string, taskId: string) {
  const listed = await post('handoff_resume', { limit: 100 }, token);
  return (listed.body.handoffs as { taskId: string }[]).filter((h) => h.taskId === taskId);
}

describe('handoff_create with an idempotencyKey', () => {
  it('a retry gets the first receipt and leaves one capsule; another request with the key is 409', async () => {
    const codex = (await t.token({ agent: 'codex', user: 'ana' })).token;
    const body = { taskId: 'R-1', summary: 'migrated half', to: 'codex', idempotencyKey: 'hand-r1' };
    const first = await post('handoff_create', body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The same request as understood: an empty list spelled out, keys in another order.
    const reordered = {
      idempotencyKey: 'hand-r1',
      nextSteps: [],
      to: 'codex',
      summary: 'migrated half',
      taskId: 'R-1',
    };
    const retry = await post('handoff_create', reordered);
    expect(retry.status).toBe(200);
    // A replay says so: the caller can tell it stored nothing new.
    expect(first.body.replayed).toBeUndefined();
    expect(retry.body).toEqual({ ...first.body, replayed: true });
    expect(await addressedTo(codex, 'R-1')).toHaveLength(1);
    const before = await t.txn();
    const other = await post('handoff_create', { ...body, summary: 'migrated all' });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', details: [{ field: 'idempotencyKey' }] });
    expect(await t.txn()).toBe(before);
  });

  it('a list sent as null is taken as absent: stored empty, and a retry with [] or without it replays', async () => {
    const lists = { decisions: null, nextSteps: null, artifacts: null, blockers: null };
    const first = await post('handoff_create', {
      taskId: 'R-N',
      summary: 'none yet',
      idempotencyKey: 'hand-n',
      ...lists,
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const resumed = await post('handoff_resume', { taskId: 'R-N' });
    expect(resumed.body.handoff).toMatchObject({ decisions: [], nextSteps: [], artifacts: [], blockers: [] });
    for (const again of [{ decisions: [] }, {}]) {
      const retry = await post('handoff_create', {
        taskId: 'R-N',
        summary: 'none yet',
        idempotencyKey: 'hand-n',
        ...again,
      });
      expect(retry.body).toEqual({ ...first.body, replayed: true });
    }
  });
});

it('a retry after the node restarts still replays: the key is stored', async () => {
  const { dir, cleanup } = await tempDir('handoff-retry');
  const open = () => startNode({ dataDir: dir, port: 0, adminToken: ADMIN, logLevel: 'silent' });
  const call = async (url: string, body: object) => {
    const res = await fetch(`${url}/v1/memory/handoff_create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const body = { taskId: 'R-2', summary: 'before the restart', idempotencyKey: 'hand-r2' };
  try {
    let node = await open();
    const first = await call(node.url, body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await node.close();
    node = await open();
    try {
      const retry = await call(node.url, body);
      expect(retry.body).toEqual({ ...first.body, replayed: true });
    } finally {
      await node.close();
    }
  } finally {
    await cleanup();
  }
});
