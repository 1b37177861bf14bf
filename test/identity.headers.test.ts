import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { decodeIdentityHeader, encodeIdentityHeader } from '../ts/protocol/identity-header.js';
import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// X-Cairn-User / X-Cairn-Scope name the same user and scope as the same text in `user_id` /
// `scope` (docs/api.md, "Identity"): the header's bytes read as UTF-8, or `UTF-8''` and the
// percent-encoded UTF-8; bytes that are not UTF-8 are refused naming the header.

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
let t: TestNode;
let shared: string;

beforeAll(async () => {
  t = await startTestNode();
  shared = (await t.token({ agent: 'app' })).token;
});
afterAll(() => t.stop());

/** A request whose header values go out as exactly these bytes (fetch sends only ByteStrings). */
function raw(
  method: string,
  path: string,
  headers: Record<string, Buffer | string>,
  body?: unknown,
): Promise<{
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string; details: unknown[] } };
}> {
  const u = new URL(path, t.url);
  const h: Record<string, string> = { authorization: `Bearer ${shared}` };
  // Node writes header strings as latin1: one char per byte.
  for (const [k, v] of Object.entries(headers)) h[k] = typeof v === 'string' ? v : v.toString('latin1');
  // A Buffer: Node writes the headers in a string body's encoding (UTF-8) when they go out together.
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  if (payload !== undefined) h['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}
const utf8 = (s: string) => Buffer.from(s, 'utf8');

describe('the header as UTF-8 bytes', () => {
  it('whoami names the exact user and scope', async () => {
    for (const [user, scope] of [
      ['用户', 'über'],
      ['café', '作業'],
    ] as const) {
      const r = await raw('GET', '/v1/whoami', { 'x-cairn-user': utf8(user), 'x-cairn-scope': utf8(scope) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ user, scope });
    }
  });

  it('reaches the notes written with the same user_id and scope', async () => {
    const w = await t.call('POST', '/v1/memory/note_write', {
      token: shared,
      body: { user_id: '用户', scope: 'über', key: 'diet', value: 'vegetarian', kind: 'user_fact' },
    });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const headers = { 'x-cairn-user': utf8('用户'), 'x-cairn-scope': utf8('über') };
    const listed = await raw('POST', '/v1/memory/note_list', headers, {});
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['diet']);
    const status = await raw('POST', '/v1/memory/status', headers, {});
    expect((status.body.identity as { scope: string }).scope).toBe('über');
    expect(JSON.stringify(status.body)).not.toContain('Ã');
  });

  it('accepts a body user_id that agrees with the header, refuses one that does not', async () => {
    const same = await raw('POST', '/v1/memory/note_list', { 'x-cairn-user': utf8('café') }, { user_id: 'café' });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    // The Latin-1 misreading of the same bytes is another name, and is told apart.
    const other = await raw('POST', '/v1/memory/note_list', { 'x-cairn-user': utf8('café') }, { user_id: 'cafÃ©' });
    expect(other.status).toBe(422);
    expect(other.body.error?.details).toEqual([{ field: 'user_id', message: 'differs from the X-Cairn-User header' }]);
  });

  it('refuses bytes that are not UTF-8 with a 422 naming the header', async () => {
    for (const [name, bytes] of [
      ['X-Cairn-User', Buffer.from([0x63, 0x61, 0x66, 0xe9])], // café in Latin-1
      ['X-Cairn-Scope', Buffer.from([0xff, 0xfe])],
      ['X-Cairn-User', Buffer.from([0xe7, 0x94])], // a truncated sequence
    ] as const) {
      for (const [method, path, body] of [
        ['GET', '/v1/whoami', undefined],
        ['POST', '/v1/memory/note_list', {}],
        ['POST', '/v1/memory/recall', { subject: 'x' }],
      ] as const) {
        const before = await t.txn();
        const r = await raw(method, path, { [name.toLowerCase()]: bytes }, body);
        expect(r.status, `${name} ${path}`).toBe(422);
        expect(r.body.error?.code).toBe('VALIDATION_ERROR');
        expect(r.body.error?.message).toMatch(new RegExp(`^${name}: not valid UTF-8`));
        expect(r.body.error?.details).toMatchObject([{ field: name }]);
        expect(await t.txn()).toBe(before);
      }
    }
  });
});

describe('names in NFC', () => {
  // "José" as one code point (NFC) and as "e" + U+0301 (NFD, as macOS input sends it).
  const [composed, decomposed] = ['Jos\u00e9', 'Jose\u0301'];

  it('one user and one scope, however the accent is encoded', async () => {
    const w = await t.call('POST', '/v1/memory/note_write', {
      token: shared,
      body: { user_id: decomposed, scope: `sc${decomposed}`, key: 'lang', value: 'pt', kind: 'user_fact' },
    });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const viaHeader = await raw(
      'POST',
      '/v1/memory/note_list',
      {
        'x-cairn-user': utf8(composed),
        'x-cairn-scope': utf8(`sc${composed}`),
      },
      {},
    );
    expect((viaHeader.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['lang']);
    const agreeing = await raw(
      'POST',
      '/v1/memory/note_list',
      { 'x-cairn-user': utf8(decomposed) },
      {
        user_id: composed,
        scope: `sc${composed}`,
      },
    );
    expect(agreeing.status, JSON.stringify(agreeing.body)).toBe(200);
    expect((agreeing.body.notes as unknown[]).length).toBe(1);
    const who = await raw('GET', '/v1/whoami', { 'x-cairn-user': utf8(decomposed) });
    expect(who.body.user).toBe(composed);
  });

  it('a token made for one spelling serves the other', async () => {
    const { token } = await t.token({ agent: `ag${decomposed}`, user: decomposed, scopes: [`sc${decomposed}`] });
    const r = await t.call('POST', '/v1/memory/note_list', {
      token,
      body: { user_id: composed, scope: `sc${composed}` },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((r.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['lang']);
    const who = await t.call('GET', '/v1/whoami', { token });
    expect(who.body).toMatchObject({ user: composed, agent: `ag${composed}` });
  });
});

describe('the 256-byte limit, counted in NFC (the form the node keeps)', () => {
  // 'é' × 128 is 256 bytes composed and 384 decomposed: one user, accepted in either spelling.
  const [composed, decomposed] = ['\u00e9'.repeat(128), 'e\u0301'.repeat(128)];
  // U+0958 has no composed form: NFC decomposes it, so 85 of them (255 bytes) become 510.
  const grows = '\u0958'.repeat(85);

  it('takes the decomposed spelling of a name that is 256 bytes composed, as the same user', async () => {
    const w = await t.call('POST', '/v1/memory/note_write', {
      token: shared,
      body: { user_id: decomposed, scope: decomposed, key: 'long', value: 1, kind: 'user_fact' },
    });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const headers = { 'x-cairn-user': utf8(composed), 'x-cairn-scope': encodeIdentityHeader(composed) };
    const listed = await raw('POST', '/v1/memory/note_list', headers, {});
    expect((listed.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['long']);
    const who = await raw('GET', '/v1/whoami', { 'x-cairn-user': encodeIdentityHeader(decomposed) });
    expect(who.status, JSON.stringify(who.body)).toBe(200);
    expect(who.body.user).toBe(composed);
  });

  it('refuses a name whose NFC form passes 256 bytes, naming the field or header sent; whoami as the verbs', async () => {
    const before = await t.txn();
    const write = { key: 'k', value: 'v', kind: 'user_fact' };
    for (const [body, field] of [
      [{ user_id: grows, ...write }, 'user_id'],
      [{ scope: grows, ...write }, 'scope'],
    ] as const) {
      const r = await t.call('POST', '/v1/memory/note_write', { token: shared, body });
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.error?.details).toEqual([{ field, message: expect.stringContaining('256 bytes') }]);
    }
    for (const [header, field] of [
      ['x-cairn-user', 'X-Cairn-User'],
      ['x-cairn-scope', 'X-Cairn-Scope'],
    ] as const) {
      for (const value of [utf8(grows), encodeIdentityHeader(grows)]) {
        for (const [method, path, body] of [
          ['POST', '/v1/memory/note_write', write],
          ['GET', '/v1/whoami', undefined],
        ] as const) {
          const r = await raw(method, path, { [header]: value }, body);
          expect([path, r.status], JSON.stringify(r.body)).toEqual([path, 422]);
          expect(r.body.error?.details).toEqual([{ field, message: expect.stringContaining('256 bytes') }]);
        }
      }
    }
    expect(await t.txn()).toBe(before);
    const made = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'app', user: grows } });
    expect(made.status).toBe(422);
    expect(made.body.error?.details).toMatchObject([{ field: 'user' }]);
  });
});

describe("the header as UTF-8''<percent-encoded>", () => {
  it('names the same user as the raw bytes and as user_id', async () => {
    const r = await t.call('GET', '/v1/whoami', {
      token: shared,
      headers: { 'x-cairn-user': "UTF-8''%E7%94%A8%E6%88%B7", 'x-cairn-scope': "utf-8'de'%C3%BCber" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ user: '用户', scope: 'über' });
    const listed = await t.call('POST', '/v1/memory/note_list', {
      token: shared,
      headers: { 'x-cairn-user': encodeIdentityHeader('用户'), 'x-cairn-scope': encodeIdentityHeader('über') },
      body: { user_id: '用户' },
    });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['diet']);
  });

  it('refuses a bad escape or escaped bytes that are not UTF-8, naming the header', async () => {
    for (const value of ["UTF-8''caf%E9", "UTF-8''caf%C3", "UTF-8''100%", "UTF-8''a b"]) {
      const r = await t.call('GET', '/v1/whoami', { token: shared, headers: { 'x-cairn-user': value } });
      expect(r.status, value).toBe(422);
      expect(r.body.error?.details).toMatchObject([{ field: 'X-Cairn-User' }]);
    }
  });

  it('goes through fetch for an MCP client over HTTP', async () => {
    const client = await mcpClient(t.url, shared, { 'x-cairn-user': encodeIdentityHeader('用户') });
    try {
      const status = toolJson(await client.callTool({ name: 'memory_status', arguments: { scope: 'über' } }));
      expect(status.body.identity).toMatchObject({ user: '用户', scope: 'über' });
      const listed = toolJson(await client.callTool({ name: 'memory_note_list', arguments: { scope: 'über' } }));
      expect((listed.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['diet']);
    } finally {
      await client.close();
    }
  });

  it('round-trips any name; plain ASCII names are sent as they are', () => {
    for (const name of ['bob', 'a%41', '用户', 'café', ' padded ', "UTF-8''x", 'emoji 🪨', "it's"]) {
      const sent = encodeIdentityHeader(name);
      expect(sent).toMatch(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/);
      expect(decodeIdentityHeader(Buffer.from(sent).toString('latin1'))).toEqual({ ok: true, value: name });
    }
    expect(encodeIdentityHeader('a%41')).toBe('a%41');
    expect(encodeIdentityHeader('用户')).toBe("UTF-8''%E7%94%A8%E6%88%B7");
  });
});

describe('cairn mcp with a non-ASCII CAIRN_USER', () => {
  it('works end to end', async () => {
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--url', t.url],
        env: {
          ...(process.env as Record<string, string>),
          CAIRN_TOKEN: shared,
          CAIRN_USER: '用户',
          CAIRN_SCOPE: 'über',
        },
        stderr: 'pipe',
      }),
    );
    try {
      const status = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
      expect(status.body.identity).toMatchObject({ user: '用户', scope: 'über' });
      const listed = toolJson(await client.callTool({ name: 'memory_note_list', arguments: {} }));
      expect((listed.body.notes as { key: string }[]).map((n) => n.key)).toEqual(['diet']);
    } finally {
      await client.close();
    }
  });

  it('refuses a name the node would refuse, naming the variable, before reaching for the node', async () => {
    const run = (env: Record<string, string>) =>
      promisify(execFile)(process.execPath, [CLI, 'mcp', '--url', 'http://127.0.0.1:9'], {
        env: { ...process.env, CAIRN_TOKEN: shared, ...env },
      }).catch((e: { code: number; stderr: string }) => e);
    for (const [variable, value, says] of [
      ['CAIRN_USER', 'a:b', 'must not contain ":"'],
      ['CAIRN_SCOPE', 'x'.repeat(257), 'at most 256 bytes'],
      ['CAIRN_USER', 'alice ', 'must not begin or end with whitespace'],
    ] as const) {
      const err = (await run({ [variable]: value })) as { code: number; stderr: string };
      expect(err.code).toBe(2);
      expect(err.stderr).toContain(`cairn mcp: ${variable}: ${says}`);
      expect(err.stderr).not.toContain('cannot reach');
    }
  });
});

describe('whitespace at either end of a name', () => {
  // HTTP drops the blanks around a header value: `X-Cairn-User: wsalice ` arrives as "wsalice".
  // So a name may not begin or end with whitespace anywhere: the same text can never be one user
  // in the body and another in the header.
  const refusal = (r: { status: number; body: Record<string, unknown> }, field: string) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field }] });
    expect(JSON.stringify(r.body.error)).toContain('must not begin or end with whitespace');
  };

  it('is refused in user_id and scope, so the blank-padded text names no second user', async () => {
    const w = await t.call('POST', '/v1/memory/note_write', {
      token: shared,
      body: { user_id: 'wsalice', scope: 'shop', key: 'cart', value: 'alice-item', kind: 'user_fact' },
    });
    expect(w.status, JSON.stringify(w.body)).toBe(200);
    const before = await t.txn();
    for (const body of [
      { user_id: 'wsalice ', scope: 'shop', key: 'cart', value: 'x', kind: 'user_fact' },
      { user_id: ' ', scope: 'shop', key: 'cart', value: 'x', kind: 'user_fact' },
      { user_id: '\u00a0wsalice', scope: 'shop', key: 'cart', value: 'x', kind: 'user_fact' },
    ]) {
      refusal(await t.call('POST', '/v1/memory/note_write', { token: shared, body }), 'user_id');
    }
    for (const scope of ['shop ', '\u3000shop', 'shop\u2028']) {
      refusal(
        await t.call('POST', '/v1/memory/note_list', { token: shared, body: { user_id: 'wsalice', scope } }),
        'scope',
      );
    }
    expect(await t.txn()).toBe(before);
    // The header's surrounding blanks are HTTP's, not the name's: the header names wsalice.
    const viaHeader = await raw(
      'POST',
      '/v1/memory/note_list',
      { 'x-cairn-user': 'wsalice ', 'x-cairn-scope': ' shop' },
      {},
    );
    expect((viaHeader.body.notes as { value: unknown }[]).map((n) => n.value)).toEqual(['alice-item']);
  });

  it('is refused in a header when it survives HTTP (escaped, or a blank HTTP does not drop), naming the header', async () => {
    for (const [name, value] of [
      ['x-cairn-user', "UTF-8''wsalice%20"],
      ['x-cairn-user', utf8('wsalice\u00a0')],
      ['x-cairn-scope', "UTF-8''%20shop"],
    ] as const) {
      for (const [method, path, body] of [
        ['GET', '/v1/whoami', undefined],
        ['POST', '/v1/memory/note_list', {}],
      ] as const) {
        const r = await raw(method, path, { [name]: value }, body);
        refusal(r, name === 'x-cairn-user' ? 'X-Cairn-User' : 'X-Cairn-Scope');
      }
    }
  });

  it('is refused in MCP tool arguments and in a token made for such a user', async () => {
    const client = await mcpClient(t.url, shared);
    try {
      const r = toolJson(
        await client.callTool({ name: 'memory_note_list', arguments: { user_id: 'wsalice ', scope: 'shop' } }),
      );
      expect(r.isError).toBe(true);
      expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'user_id' }] });
    } finally {
      await client.close();
    }
    const made = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'app', user: 'wsalice ' } });
    refusal(made, 'user');
    const scoped = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'app', scopes: ['shop', ' shop'] } });
    refusal(scoped, 'scopes.1');
  });
});

describe('a repeated identity header', () => {
  /** A request with `name` sent once per value (Node joins them into "alice, bob" on arrival). */
  function twice(method: string, path: string, name: string, values: string[], body?: unknown) {
    const u = new URL(path, t.url);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | string[]> = { authorization: `Bearer ${shared}`, [name]: values };
    if (payload !== undefined) headers['content-type'] = 'application/json';
    return new Promise<{ status: number; body: { error?: { code: string; details: unknown[] } } }>(
      (resolve, reject) => {
        const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
          );
        });
        req.on('error', reject);
        req.end(payload);
      },
    );
  }

  it('is refused with a 422 naming it, never joined into a third name', async () => {
    for (const name of ['X-Cairn-User', 'X-Cairn-Scope']) {
      for (const [method, path, body] of [
        ['GET', '/v1/whoami', undefined],
        ['GET', '/v1/memory/status', undefined],
        ['POST', '/v1/memory/note_write', { key: 'dup', value: 1, kind: 'decision' }],
      ] as const) {
        const before = await t.txn();
        const r = await twice(method, path, name, ['alice', 'bob'], body);
        expect([name, path, r.status, r.body.error?.code]).toEqual([name, path, 422, 'VALIDATION_ERROR']);
        expect(r.body.error?.details).toMatchObject([{ field: name }]);
        expect(await t.txn()).toBe(before);
      }
    }
  });
  it('sent once with a comma in it is still one name', async () => {
    const r = await twice('GET', '/v1/whoami', 'X-Cairn-User', ['alice, bob']);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user: 'alice, bob' });
  });
});
