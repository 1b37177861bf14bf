import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { INITIALIZE, mcpClient, postMcp, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// Session caps through the official MCP client: a token's sessions are bounded by its own share, and
// a full node refuses new sessions instead of closing another token's live one.

let t: TestNode;
let claudeToken: string;
const opened: Client[] = [];

beforeAll(async () => {
  t = await startTestNode({ sessions: { maxSessions: 4, maxPerToken: 2, idleMs: 60_000 } });
});
afterAll(async () => {
  for (const c of opened) await c.close().catch(() => undefined);
  await t.stop();
});

const connect = async (token: string) => {
  const c = await mcpClient(t.url, token);
  opened.push(c);
  return c;
};

const initialize = (token: string) => postMcp(t.url, token, INITIALIZE);

describe('MCP session caps', () => {
  it("one token opening many sessions evicts only its own, never another token's", async () => {
    const codex = await connect((await t.token({ agent: 'codex' })).token);
    claudeToken = (await t.token({ agent: 'claude' })).token;
    const claude = [];
    for (let i = 0; i < 6; i++) claude.push(await connect(claudeToken));
    await expect(codex.listTools()).resolves.toBeDefined();
    // claude keeps its two most recent sessions; its older ones were the ones closed.
    await expect(claude[0]?.ping()).rejects.toThrow();
    await expect(claude[5]?.ping()).resolves.toBeDefined();
    await expect(claude[4]?.ping()).resolves.toBeDefined();
  });

  it('a full node refuses a new session with 503 and Retry-After, and the live ones keep working', async () => {
    const third = (await t.token({ agent: 'third' })).token;
    const fourth = (await t.token({ agent: 'fourth' })).token;
    const held = await connect(third); // the node now holds codex 1 + claude 2 + third 1 = 4
    const refused = await initialize(fourth);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('60');
    const body = refused.json as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(/maximum of 4 MCP sessions/);
    await expect(held.ping()).resolves.toBeDefined();
    // A token at its own share (claude holds 2) still replaces its own oldest session on a full node.
    const renewed = await connect(claudeToken);
    await expect(renewed.ping()).resolves.toBeDefined();
    await expect(held.ping()).resolves.toBeDefined();
  });
});

// Found by an audit: each token was held to its share, but an operator's several tokens of one
// user were not, so eight tokens of one user at 16 sessions each filled the node's 128.
describe('the sessions of one user', () => {
  let n: TestNode;
  const clients: Client[] = [];
  beforeAll(async () => {
    n = await startTestNode({ sessions: { maxSessions: 4, maxPerToken: 2, maxPerUser: 3, idleMs: 60_000 } });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await n.stop();
  });
  // Sessions are ordered by the millisecond of their last request: a step apart keeps that order.
  const tick = () => new Promise((r) => setTimeout(r, 3));
  const open = async (token: string) => {
    const c = await mcpClient(n.url, token);
    clients.push(c);
    return c;
  };

  it("share one bound: the user's least recently used session makes room, never another user's", async () => {
    const first = (await n.token({ agent: 'claude', user: 'alice' })).token;
    const second = (await n.token({ agent: 'codex', user: 'alice' })).token;
    const a = [await open(first), await open(first), await open(second)];
    await tick();
    await a[0]?.ping(); // a[1] is now alice's least recently used session
    a.push(await open(second)); // alice at her 3: a[1] closed, the node not full
    await expect(a[1]?.ping()).rejects.toThrow();
    for (const c of [a[0], a[2], a[3]]) {
      await tick();
      await expect(c?.ping()).resolves.toBeDefined();
    }
    // Bob still finds the place alice's tokens together could otherwise have taken.
    const bob = await open((await n.token({ agent: 'claude', user: 'bob' })).token);
    await expect(bob.ping()).resolves.toBeDefined();
    // The node is full now: alice's third token replaces her own oldest session, not bob's.
    const third = await open((await n.token({ agent: 'cursor', user: 'alice' })).token);
    await expect(third.ping()).resolves.toBeDefined();
    await expect(bob.ping()).resolves.toBeDefined();
    expect((await Promise.allSettled(a.map((c) => c?.ping()))).filter((r) => r.status === 'fulfilled')).toHaveLength(2);
  });
});

// Found by a review (issue 4, item 5): an app token serving many end users had 16 sessions and
// no share per end user, so one user's looping client could hold all 16, closing everyone else's.
describe('the sessions of one end user of an app token', () => {
  let n: TestNode;
  const clients: Client[] = [];
  beforeAll(async () => {
    // A quarter of the token's 8: each end user's initializes may hold 2.
    n = await startTestNode({ sessions: { maxSessions: 20, maxPerToken: 8, idleMs: 60_000 } });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await n.stop();
  });
  const tick = () => new Promise((r) => setTimeout(r, 3));
  const open = async (token: string, user?: string) => {
    const c = await mcpClient(n.url, token, user === undefined ? {} : { 'x-cairn-user': user });
    clients.push(c);
    await tick();
    return c;
  };

  it("one end user's initializes close only that user's own oldest sessions", async () => {
    const app = (await n.token({ agent: 'app' })).token;
    const others = [await open(app, 'bob'), await open(app, 'carol'), await open(app)];
    // As many as the token may hold: before, they closed every other user's session.
    const alice = [];
    for (let i = 0; i < 8; i++) alice.push(await open(app, 'alice'));
    // Alice keeps her two newest; her older six were closed, nobody else's.
    for (const c of alice.slice(0, 6)) await expect(c.ping()).rejects.toThrow();
    for (const c of [...alice.slice(6), ...others]) await expect(c.ping()).resolves.toBeDefined();
    const status = toolJson(await (alice[7] as Client).callTool({ name: 'memory_status', arguments: {} }));
    expect(status.isError).toBe(false);
  });

  it('sessions naming no user keep the token’s whole share, and a bound token has no end-user share', async () => {
    const team = (await n.token({ agent: 'team' })).token;
    const mine = [];
    for (let i = 0; i < 4; i++) mine.push(await open(team));
    for (const c of mine) await expect(c.ping()).resolves.toBeDefined();
    const bound = (await n.token({ agent: 'solo', user: 'dora' })).token;
    const hers = [];
    for (let i = 0; i < 4; i++) hers.push(await open(bound, 'dora'));
    for (const c of hers) await expect(c.ping()).resolves.toBeDefined();
  });
});

// Found by an audit: the sessions of revoked tokens kept their places until the 30-minute idle
// sweep, so a few tokens could fill the node and revoking them did not let anyone back in.
describe('sessions of tokens that no longer work', () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startTestNode({ sessions: { maxSessions: 4, maxPerToken: 2, idleMs: 60_000 } });
  });
  afterAll(() => n.stop());

  const init = async (token: string) => (await postMcp(n.url, token, INITIALIZE)).status;

  it('revoking a token closes its sessions and frees their places at once', async () => {
    const flood = [await n.token({ agent: 'flood1' }), await n.token({ agent: 'flood2' })];
    for (const f of flood) for (let i = 0; i < 2; i++) expect(await init(f.token)).toBe(200);
    const bob = (await n.token({ agent: 'bob' })).token;
    expect(await init(bob)).toBe(503);
    for (const f of flood) expect((await n.call('DELETE', `/v1/admin/tokens/${f.id}`)).status).toBe(200);
    // Four places freed: bob's next sessions fit, up to the node's cap again.
    expect(await init(bob)).toBe(200);
    const carol = (await n.token({ agent: 'carol' })).token;
    expect(await init(carol)).toBe(200);
    expect(await init(carol)).toBe(200);
    const dave = (await n.token({ agent: 'dave' })).token;
    expect(await init(dave)).toBe(200);
    expect(await init((await n.token({ agent: 'erin' })).token)).toBe(503);
  });

  it('a full node drops the sessions of tokens that expired before refusing a new one', async () => {
    const soon = await n.token({ agent: 'brief', expiresAt: new Date(Date.now() + 1500).toISOString() });
    // bob 1 + carol 2 + dave 1: full. Close dave's by revoking him, then fill with the brief token.
    const dave = (await n.call('GET', '/v1/admin/tokens')).body.tokens as { id: string; agent: string }[];
    expect((await n.call('DELETE', `/v1/admin/tokens/${dave.find((r) => r.agent === 'dave')?.id}`)).status).toBe(200);
    expect(await init(soon.token)).toBe(200);
    const frank = (await n.token({ agent: 'frank' })).token;
    expect(await init(frank)).toBe(503);
    await new Promise((r) => setTimeout(r, 1700));
    expect(await init(frank)).toBe(200);
  });
});
