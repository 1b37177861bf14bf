import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// Requests without a valid token are counted by address, apart from the tokens' counts: a flood
// of made-up bearer tokens (more than the 10,000 token counts the node keeps) neither resets a
// real token's count nor goes uncounted (issue 4, item 2).

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 5 });
});
afterAll(() => t.stop());

const whoami = (token: string | null) => t.call('GET', '/v1/whoami', { token });

/** `n` requests, each with a bearer token never issued, `width` at a time; their statuses, counted. */
async function flood(n: number, width = 32): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const r = await fetch(`${t.url}/v1/whoami`, { headers: { authorization: `Bearer cairn_madeup${i}` } });
      await r.arrayBuffer();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return statuses;
}

it('a token at its limit stays limited after a flood of 10,050 made-up tokens', { timeout: 180_000 }, async () => {
  const real = (await t.token({ agent: 'steady' })).token;
  for (let i = 0; i < 5; i++) expect((await whoami(real)).status).toBe(200);
  const spent = await whoami(real);
  expect([spent.status, spent.body.error?.code]).toEqual([429, 'RATE_LIMITED']);

  const statuses = await flood(10_050);
  // The address's first 5 failures are 401; every later one is 429, so the flood was counted.
  expect(statuses).toEqual({ 401: 5, 429: 10_045 });

  const still = await whoami(real);
  expect([still.status, still.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
});

it('an address past its failures is refused 429 without a valid token, and a valid token from it goes on', async () => {
  const bad = await whoami('cairn_never-issued');
  expect([bad.status, bad.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
  expect(bad.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect(bad.body.error?.message).toMatch(/without a valid token from this address.*unknown or revoked/);
  const none = await whoami(null);
  expect([none.status, none.body.error?.code]).toEqual([429, 'RATE_LIMITED']);

  const fresh = (await t.token({ agent: 'newcomer' })).token;
  const ok = await whoami(fresh);
  expect([ok.status, ok.body.agent]).toEqual([200, 'newcomer']);
});
