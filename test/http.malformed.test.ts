import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN, startTestNode, type TestNode } from './node.js';

// Requests fastify or Node's HTTP parser refuse before any route runs answer in DESIGN §3's
// shape, and a query value whose escapes are not UTF-8 is refused naming it, not taken literally.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

/** One raw HTTP/1.1 request (bytes as given, so the URL is not re-encoded): status and parsed body. */
function raw(
  lines: string[],
  extra = '',
): Promise<{
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string; details: { field: string }[] } };
}> {
  return new Promise((resolve, reject) => {
    const s = connect(t.port, '127.0.0.1');
    let data = Buffer.alloc(0);
    s.on('data', (d) => {
      data = Buffer.concat([data, d]);
    });
    s.on('error', () => undefined);
    s.on('close', () => {
      const text = data.toString('utf8');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (m === null) return reject(new Error(`no HTTP reply: ${JSON.stringify(text)}`));
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      resolve({ status: Number(m[1]), body: JSON.parse(body) });
    });
    s.write(
      Buffer.from(
        `${[...lines, `Host: 127.0.0.1:${t.port}`, 'Connection: close', extra].filter((l) => l !== '').join('\r\n')}\r\n\r\n`,
        'latin1',
      ),
    );
  });
}

const GET = (path: string) => raw([`GET ${path} HTTP/1.1`, `Authorization: Bearer ${ADMIN}`]);

function expectShape(r: Awaited<ReturnType<typeof raw>>, status: number, field: string) {
  expect(r.status).toBe(status);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(r.body.error).toEqual({
    code: 'VALIDATION_ERROR',
    message: expect.any(String),
    details: [expect.objectContaining({ field })],
  });
}

describe('malformed requests', () => {
  it('headers over 16 KiB: 431 in the §3 shape', async () => {
    const r = await raw(['GET /v1/whoami HTTP/1.1', `Authorization: Bearer ${ADMIN}`, `X-Big: ${'a'.repeat(20_000)}`]);
    expectShape(r, 431, '(headers)');
  });
  it('raw non-ASCII in the URL: 400 in the §3 shape', async () => {
    const r = await GET('/v1/memory/status?scope=caf\u00e9');
    expectShape(r, 400, '(url)');
  });
  it('a bad percent-escape in the path: 400 in the §3 shape', async () => {
    const r = await GET('/v1/memory/%zz');
    expectShape(r, 400, '(url)');
  });
});

describe('query values are UTF-8', () => {
  it('a value whose escapes are not UTF-8 is 422 naming the parameter, never the literal text', async () => {
    const before = await t.txn();
    const r = await t.call('GET', '/v1/memory/status?scope=%E9');
    expect([r.status, r.body.error?.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(r.body.error?.details).toEqual([expect.objectContaining({ field: 'scope' })]);
    const bad = await t.call('GET', '/v1/memory/status?scope=a%zz');
    expect([bad.status, bad.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'scope' })]]);
    expect(await t.txn()).toBe(before);
  });
  it('the import route refuses such a user or scope too', async () => {
    const r = await t.call('POST', '/v1/admin/import?user=%E9&scope=s', {
      body: '',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect([r.status, r.body.error?.details]).toEqual([422, [expect.objectContaining({ field: 'user' })]]);
  });
  it('UTF-8 escapes and + decode as before', async () => {
    const r = await t.call('GET', '/v1/memory/status?scope=caf%C3%A9+bar');
    expect(r.status).toBe(200);
    expect((r.body.identity as { scope: string }).scope).toBe('café bar');
  });
});
