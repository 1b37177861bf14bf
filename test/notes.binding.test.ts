import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type Caller, Store } from '../ts/index.js';
import { tempDir } from './helpers.js';

// The notes verbs through the binding, as the node calls them: one JSON body in, one JSON reply
// out, identity in the caller, policy (`allowPrivate`) in the body.

let dir: string;
let cleanup: () => Promise<void>;
let store: Store;

const as = (agent: string, user = 'u1'): Caller => ({ tenant: 'local', user, scope: 'default', agent });

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('notes'));
  store = await Store.open(dir);
});

afterEach(async () => {
  await store.close();
  await cleanup();
});

describe('notes through the binding', () => {
  it('writes with CAS and reads back with versions', async () => {
    const a = as('claude');
    const created = await store.notes('note_write', a, {
      key: 'editor',
      value: { theme: 'dark' },
      kind: 'user_preference',
      expectedVersion: 0,
    });
    expect(created).toMatchObject({ key: 'editor', version: 1, evolution: 'created', supersedes: null });
    expect(created.id).toMatch(/^\d+$/);
    const conflict = await store.notes('note_write', a, { key: 'editor', value: {}, expectedVersion: 0 });
    expect(conflict).toEqual({
      error: {
        code: 'VERSION_CONFLICT',
        message: expect.any(String),
        details: [{ currentVersion: 1, agent: 'claude', updatedAt: expect.any(String) }],
      },
    });
    const merged = await store.notes('note_write', as('codex'), {
      key: 'editor',
      value: { font: 'mono' },
      writeMode: 'merge',
      expectedVersion: 1,
    });
    expect(merged).toMatchObject({ version: 2, evolution: 'merged', supersedes: 1 });
    const listed = await store.notes('note_list', a, { key: 'editor' });
    expect(listed.notes).toEqual([
      expect.objectContaining({ value: { font: 'mono', theme: 'dark' }, version: 2, agent: 'codex' }),
    ]);
    const history = await store.notes('history', a, { key: 'editor' });
    expect((history.events as { op: string }[]).map((e) => e.op)).toEqual(['create', 'merge']);
  });

  it('refuses bad input by field and private notes without the policy', async () => {
    const a = as('claude');
    const bad = await store.notes('note_write', a, { key: '', value: 1, kind: 'user_fact' });
    expect(bad).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: [{ field: 'key' }] } });
    const priv = await store.notes('note_write', a, { key: 'k', value: 1, kind: 'user_fact', private: true });
    expect(priv).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: [{ field: 'private' }] } });
    expect((await store.notes('note_list', a, {})).notes).toEqual([]);
  });

  it('lets another agent resume a handoff, and another user see nothing', async () => {
    const created = await store.notes('handoff_create', as('claude'), {
      taskId: 'T1',
      summary: 'half done',
      nextSteps: ['write tests'],
      to: 'codex',
    });
    expect(created).toMatchObject({ taskId: 'T1', to: 'codex' });
    const resumed = await store.notes('handoff_resume', as('codex'), { taskId: 'T1' });
    expect(resumed).toMatchObject({ state: 'resumed', handoff: { summary: 'half done', from: 'claude' } });
    const addressed = await store.notes('handoff_resume', as('codex'), {});
    expect(addressed.handoffs).toHaveLength(1);
    expect(await store.notes('handoff_resume', as('codex', 'u2'), { taskId: 'T1' })).toEqual({
      state: 'none',
      taskId: 'T1',
    });
  });
});
