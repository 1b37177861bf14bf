import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cairn, tempDir } from './helpers.js';
import { mcpClient } from './mcp-client.js';
import { ADMIN, startTestNode, type TestNode } from './node.js';

// Tokens that expire: made with `cairn token create --expires`, shown by `token list`, and refused
// with 401 once past their expiry (HTTP, and an MCP session opened before it).

const sleepUntil = (iso: string) => new Promise((r) => setTimeout(r, Math.max(0, Date.parse(iso) - Date.now() + 50)));

describe('cairn token create --expires', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tempDir('token-expiry'));
    expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
  });
  afterAll(() => cleanup());

  it('stores a duration as an instant and lists it (text and --json)', async () => {
    const before = Date.now();
    const made = await cairn(['token', 'create', '--agent', 'x', '--expires', '12h', '--data-dir', dir, '--json']);
    expect(made.code, made.stderr).toBe(0);
    const { id, expiresAt } = JSON.parse(made.stdout) as { id: string; expiresAt: string };
    const ms = Date.parse(expiresAt) - before;
    expect(ms).toBeGreaterThanOrEqual(12 * 3_600_000);
    expect(ms).toBeLessThan(12 * 3_600_000 + 60_000);
    const list = await cairn(['token', 'list', '--data-dir', dir]);
    expect(list.stdout).toMatch(new RegExp(`${id} .*expires=${expiresAt}  live`));
    // Tokens made without --expires (as every token written before) never expire.
    expect(list.stdout).toMatch(/agent=admin .*expires=never {2}live/);
    const json = JSON.parse((await cairn(['token', 'list', '--data-dir', dir, '--json'])).stdout) as {
      tokens: { id: string; expiresAt: string | null }[];
    };
    expect(json.tokens.find((t) => t.id === id)?.expiresAt).toBe(expiresAt);
    // Never: null, as `token create --json` says it.
    expect(json.tokens.find((t) => t.id !== id)?.expiresAt).toBeNull();
  });

  it('takes an RFC 3339 date-time, and refuses a past one or a malformed value (exit 2)', async () => {
    const made = await cairn([
      'token',
      'create',
      '--agent',
      'y',
      '--expires',
      '2999-01-02T03:04:05+01:00',
      '--data-dir',
      dir,
      '--json',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect((JSON.parse(made.stdout) as { expiresAt: string }).expiresAt).toBe('2999-01-02T02:04:05.000Z');
    for (const bad of ['2000-01-01T00:00:00Z', '1 hour', '0m', 'soon']) {
      const r = await cairn(['token', 'create', '--agent', 'z', '--expires', bad, '--data-dir', dir]);
      expect([r.code, r.stderr.includes('--expires')]).toEqual([2, true]);
    }
  });

  it('refuses a duration past year 9999 as bad usage naming --expires, not INTERNAL (new-user audit)', async () => {
    // Before: `99999999d` was INTERNAL "Invalid time value" (exit 1), `2000000w` "Invalid ISO datetime".
    for (const far of ['99999999d', '2000000w']) {
      const r = await cairn(['token', 'create', '--agent', 'far', '--expires', far, '--data-dir', dir, '--json']);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toEqual({
        error: {
          code: 'VALIDATION_ERROR',
          message: `--expires: is past 9999-12-31T23:59:59.999Z, got "${far}"`,
          details: [{ field: '--expires', message: `is past 9999-12-31T23:59:59.999Z, got "${far}"` }],
        },
      });
    }
    // `--expires -5m` is refused saying to give it as `--expires=-5m`, which is then in the past.
    const back = await cairn(['token', 'create', '--agent', 'far', '--expires=-5m', '--data-dir', dir]);
    expect([back.code, back.stderr]).toEqual([2, 'cairn token: --expires: must be in the future, got "-5m"\n']);
    const list = await cairn(['token', 'list', '--data-dir', dir]);
    expect(list.stdout).not.toContain('agent=far');
  });
});

describe('an expired token', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode();
  });
  afterAll(() => t.stop());

  it('is 401 saying it expired, over HTTP and in an MCP session opened before', async () => {
    const made = await t.call('POST', '/v1/admin/tokens', {
      token: ADMIN,
      body: { agent: 'brief', expiresAt: new Date(Date.now() + 1500).toISOString() },
    });
    expect(made.status).toBe(200);
    const { token, expiresAt } = made.body as { token: string; expiresAt: string };
    const client = await mcpClient(t.url, token);
    try {
      expect((await t.call('GET', '/v1/whoami', { token })).status).toBe(200);
      await expect(client.listTools()).resolves.toBeDefined();
      await sleepUntil(expiresAt);
      const r = await t.call('POST', '/v1/memory/recall', { token, body: { subject: 'x' } });
      expect([r.status, r.body.error?.code]).toEqual([401, 'UNAUTHENTICATED']);
      expect(r.body.error?.message).toBe(`the token expired at ${expiresAt}`);
      await expect(client.listTools()).rejects.toThrow(/expired/);
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('the admin API refuses an expiry in the past (422 naming expiresAt)', async () => {
    const r = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'late', expiresAt: '2000-01-01T00:00:00Z' } });
    expect([r.status, r.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'expiresAt' })]]);
  });
});
