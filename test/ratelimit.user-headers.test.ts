import { afterAll, beforeAll, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// The x-ratelimit-* headers describe the limit a call is held to: the end user's share of a token
// that serves several when it has fewer requests left than the token, else the token's count
// (issue 4, item 3: they showed the token's count even on a call its user's share refused).

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode({ rateLimit: 8, rateLimitPerUser: 3 });
});
afterAll(() => t.stop());

const status = (token: string, user?: string) =>
  t.call('POST', '/v1/memory/status', {
    token,
    body: {},
    ...(user === undefined ? {} : { headers: { 'x-cairn-user': user } }),
  });

const limits = (h: Headers) => ({
  limit: h.get('x-ratelimit-limit'),
  remaining: h.get('x-ratelimit-remaining'),
  reset: h.get('x-ratelimit-reset'),
});

it("a call held to its user's share has the share's headers, down to none left on the refusal", async () => {
  const app = (await t.token({ agent: 'app' })).token;
  for (const left of ['2', '1', '0']) {
    const r = await status(app, 'ursula');
    expect(r.status).toBe(200);
    expect(limits(r.headers)).toEqual({ limit: '3', remaining: left, reset: expect.stringMatching(/^[1-9]\d*$/) });
  }
  const over = await status(app, 'ursula');
  expect([over.status, over.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
  expect(limits(over.headers)).toEqual({ limit: '3', remaining: '0', reset: over.headers.get('retry-after') });

  // A call naming no user is held to the token alone: 4 of its 8 spent, 3 left after this one.
  expect(limits((await status(app)).headers)).toMatchObject({ limit: '8', remaining: '3' });
  // Another user's share has 2 left, no fewer than the token (6 of 8 spent): the token's headers.
  expect(limits((await status(app, 'viktor')).headers)).toMatchObject({ limit: '8', remaining: '2' });
});

it("a call whose token has fewer left than the user's share has the token's headers", async () => {
  const app = (await t.token({ agent: 'busy' })).token;
  for (let i = 0; i < 6; i++) expect((await status(app)).status).toBe(200);
  const r = await status(app, 'wanda');
  expect(r.status).toBe(200);
  expect(limits(r.headers)).toMatchObject({ limit: '8', remaining: '1' });
});

it("a token bound to a user keeps the token's headers (it has no share)", async () => {
  const bound = (await t.token({ agent: 'solo', user: 'xena' })).token;
  const r = await status(bound);
  expect(limits(r.headers)).toMatchObject({ limit: '8', remaining: '7' });
});
