import { afterAll, beforeAll, expect, it } from 'vitest';

import { cairn } from './helpers.js';
import { stdioBridge, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// `cairn mcp` with a CAIRN_USER its token may not act for, or a CAIRN_SCOPE it may not use, opened
// a session and then refused every tool call naming the header X-Cairn-User, which the user never
// set (found by a new-user audit). It now exits 1 at start, naming the variable and what to do.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

it('a CAIRN_USER or CAIRN_SCOPE the token may not use ends the bridge at start, naming the variable', async () => {
  const ann = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const user = await cairn(['mcp', '--url', t.url], { CAIRN_TOKEN: ann, CAIRN_USER: 'bob' });
  expect(user.code).toBe(1);
  expect(user.stderr).toBe(
    'cairn mcp: CAIRN_USER: FORBIDDEN: this token acts only for user "ann"; set CAIRN_USER to that user or leave it out, or give the bridge a token made for the user (`cairn token create --agent NAME --user ID`)\n',
  );
  const limited = (await t.token({ agent: 'codex', scopes: ['work'] })).token;
  const scope = await cairn(['mcp', '--url', t.url], { CAIRN_TOKEN: limited, CAIRN_SCOPE: 'home' });
  expect(scope.code).toBe(1);
  expect(scope.stderr).toContain('cairn mcp: CAIRN_SCOPE: FORBIDDEN: this token may use only the scopes work;');
});

it('a CAIRN_USER the token may act for is taken as before', async () => {
  const ann = (await t.token({ agent: 'claude', user: 'ann' })).token;
  const client = await stdioBridge('identity', ['--url', t.url], { CAIRN_TOKEN: ann, CAIRN_USER: 'ann' });
  try {
    const status = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(status.isError).toBe(false);
    expect(status.body.identity).toMatchObject({ user: 'ann', agent: 'claude' });
  } finally {
    await client.close();
  }
});
