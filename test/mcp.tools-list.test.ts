import { afterAll, beforeAll, expect, it } from 'vitest';

import { mcpClient } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// `tools/list` as a model reads it (found by an audit): 33,304 bytes, 15% of them the `user_id`
// and `scope` descriptions repeated in every tool, the `user_id` one inviting a model to fill in
// a person's name (its writes then went to another user's memory), and `annotations.title`
// repeating `title`.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => t.stop());

it('is smaller, tells a model to leave user_id out, and repeats no title', async () => {
  const { token } = await t.token({ agent: 'claude', user: 'ann' });
  const client = await mcpClient(t.url, token);
  try {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(15);
    expect(Buffer.byteLength(JSON.stringify({ tools }), 'utf8')).toBeLessThan(32_800);
    for (const tool of tools) {
      const props = tool.inputSchema.properties as Record<string, { description?: string }>;
      expect(props.user_id?.description).toMatch(/^Omit: your token or app sets it\./);
      expect(Buffer.byteLength(props.scope?.description ?? '')).toBeLessThan(60);
      expect(tool.title).toBeTypeOf('string');
      expect(tool.annotations).not.toHaveProperty('title');
      expect(tool.annotations?.readOnlyHint).toBeTypeOf('boolean');
    }
    // What the audit found missing or wrong: history's paging fields undescribed, and
    // handoff_resume's "`expired` says when it expired" (the time is `expiredAt`).
    const history = tools.find((x) => x.name === 'memory_history');
    const fields = history?.inputSchema.properties as Record<string, { description?: string }>;
    for (const f of ['limit', 'includePrivate', 'compact']) expect(fields[f]?.description).toBeTypeOf('string');
    expect(tools.find((x) => x.name === 'memory_handoff_resume')?.description).toContain('`expiredAt`');
  } finally {
    await client.close();
  }
});

// Found by a review from a model's side: the server's instructions named only the knowledge
// tools, so a model reading them learned nothing of notes or handoffs.
it('instructions name the notes and handoff tools, and only tools the node lists', async () => {
  const { token } = await t.token({ agent: 'claude', user: 'ann' });
  const client = await mcpClient(t.url, token);
  try {
    const instructions = client.getInstructions() ?? '';
    const named = new Set(instructions.match(/memory_[a-z_]+/g));
    for (const tool of ['memory_context', 'memory_note_write', 'memory_handoff_resume', 'memory_handoff_create']) {
      expect(named.has(tool), tool).toBe(true);
    }
    const listed = new Set((await client.listTools()).tools.map((x) => x.name));
    for (const tool of named) expect(listed.has(tool), tool).toBe(true);
    // Found playing two agents: a capsule is as of when it was left, and the task's notes, which
    // only a list with its taskId shows, may have moved on; the instructions stopped at the resume.
    expect(instructions).toContain(
      'then memory_note_list with that taskId: the task notes may be newer than the capsule',
    );
  } finally {
    await client.close();
  }
});

// Found playing two agents over MCP: memory_note_write said VERSION_CONFLICT "tells you the
// current version" (a model retried with it unread, overwriting the other agent's write) and
// that a merge "deep-merges objects" without saying arrays replace (a model sending
// `{done: ["cutover"]}` to append lost the items before), and nothing of a task note updated
// without its taskId (a second note was made beside it).
it('memory_note_write says to re-read on a conflict, that a merge replaces arrays, and to resend a taskId', async () => {
  const { token } = await t.token({ agent: 'claude', user: 'ann' });
  const client = await mcpClient(t.url, token);
  try {
    const { tools } = await client.listTools();
    const write = tools.find((x) => x.name === 'memory_note_write');
    const text = `${write?.description} ${JSON.stringify(write?.inputSchema)}`;
    expect(text).not.toContain('VERSION_CONFLICT tells you the current version');
    expect(text).toContain('on VERSION_CONFLICT read the note again and apply your change to it before retrying');
    expect(text).toContain('`writeMode: merge` deep-merges objects; arrays and other values replace whole');
    expect(text).toContain('a task note needs its `taskId` on every write, else a new note is made beside it');
  } finally {
    await client.close();
  }
});
