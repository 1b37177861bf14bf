import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Found playing two agents on one node: memory_history was oldest first only, so the change a
// model wanted (the latest version of a long-lived task note, who wrote it) was pages away.
// `newestFirst` reads back from the latest event; audit takes it too.

let t: TestNode;
let claude: string;
let codex: string;

beforeAll(async () => {
  t = await startTestNode();
  claude = (await t.token({ agent: 'claude', user: 'ann' })).token;
  codex = (await t.token({ agent: 'codex', user: 'ann' })).token;
});
afterAll(async () => t.stop());

it('memory_history with newestFirst gives another agent the latest changes first, paged back in time', async () => {
  const a = await mcpClient(t.url, claude);
  const b = await mcpClient(t.url, codex);
  try {
    const call = async (client: typeof a, name: string, args: Record<string, unknown>) =>
      toolJson(await client.callTool({ name, arguments: args }));
    for (const step of ['schema', 'tests', 'migration', 'e2e', 'release']) {
      const r = await call(a, 'memory_note_write', {
        key: 'progress',
        value: { step },
        kind: 'task_state',
        taskId: 'AUTH-12',
      });
      expect(r.isError).toBe(false);
    }
    const steps = (body: Record<string, unknown>) =>
      (body.events as { after: { value: { step: string } }; agent: string }[]).map((e) => e.after.value.step);
    const first = await call(b, 'memory_history', { key: 'progress', taskId: 'AUTH-12', limit: 2, newestFirst: true });
    expect(first.isError).toBe(false);
    expect(steps(first.body)).toEqual(['release', 'e2e']);
    const second = await call(b, 'memory_history', {
      key: 'progress',
      taskId: 'AUTH-12',
      limit: 2,
      newestFirst: true,
      cursor: first.body.nextCursor,
    });
    expect(steps(second.body)).toEqual(['migration', 'tests']);
    // Oldest first stays the default.
    const oldest = await call(b, 'memory_history', { key: 'progress', taskId: 'AUTH-12', limit: 2 });
    expect(steps(oldest.body)).toEqual(['schema', 'tests']);
    // A cursor of one order is refused in the other, naming it.
    const mixed = await call(b, 'memory_history', {
      key: 'progress',
      taskId: 'AUTH-12',
      cursor: first.body.nextCursor,
    });
    expect(mixed.isError).toBe(true);
    expect(JSON.stringify(mixed.body)).toContain('"field":"cursor"');

    const { tools } = await b.listTools();
    expect(tools.find((x) => x.name === 'memory_history')?.description).toContain('`newestFirst`');
  } finally {
    await a.close();
    await b.close();
  }
});

it('audit with newestFirst gives the calling agent its latest writes first', async () => {
  const post = (body: object) => t.call('POST', '/v1/memory/audit', { token: claude, body });
  const r = await post({ newestFirst: true, limit: 1 });
  expect(r.status).toBe(200);
  const [latest] = r.body.events as { op: string; after: { value: { step: string } } }[];
  expect(latest?.after.value.step).toBe('release');
});
