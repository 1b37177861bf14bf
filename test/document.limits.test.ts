import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

import { longPdf, makeDocx, makePdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// A document's reader has a time and a heap (CAIRN_DOCUMENT_READ_SECONDS, CAIRN_DOCUMENT_READ_MB,
// read when a document is handed to a reader): a file past either is refused with 422
// DOCUMENT_NOT_READABLE, nothing is stored, and the next document is read as usual. Before, a
// reader had neither, and a pathological file held it (and its memory) for as long as it took.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());
afterEach(() => {
  delete process.env.CAIRN_DOCUMENT_READ_SECONDS;
  delete process.env.CAIRN_DOCUMENT_READ_MB;
});

const send = (scope: string, bytes: Buffer, name: string) =>
  t.call('POST', '/v1/memory/document', {
    token: agent,
    body: { scope, content_base64: bytes.toString('base64'), name },
  });

/** The scope's counts as memory_status lists them; null for a scope that holds nothing. */
async function stored(scope: string): Promise<unknown> {
  const r = await t.call('POST', '/v1/memory/status', { token: agent, body: {} });
  return (r.body.scopes as { scope: string }[]).find((s) => s.scope === scope) ?? null;
}

const small = () => makePdf([[{ text: 'The refund service ships on Friday.', y: 700 }]]);

it('a document that takes longer than its time is refused, and the next one is read', async () => {
  process.env.CAIRN_DOCUMENT_READ_SECONDS = '1';
  // 4,000 pages (3.4 MB): seconds of reading, more than the one allowed (read whole, its 1.7 MB of
  // text would be refused 413).
  const r = await send('slow', longPdf(4000), 'long.pdf');
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error).toMatchObject({
    code: 'DOCUMENT_NOT_READABLE',
    message: expect.stringContaining('longer than 1 s (CAIRN_DOCUMENT_READ_SECONDS)'),
    details: [{ field: 'content_base64' }],
  });
  expect(await stored('slow')).toBeNull();
  // The next document, under the default time (a fresh reader loading pdf.js can take a second
  // on a loaded machine), is read as usual.
  delete process.env.CAIRN_DOCUMENT_READ_SECONDS;
  const next = await send('slow', small(), 'small.pdf');
  expect(next.status, JSON.stringify(next.body)).toBe(200);
});

it('a document whose reading outgrows the reader’s heap is refused, and the next one is read', async () => {
  process.env.CAIRN_DOCUMENT_READ_MB = '64';
  // 300,000 paragraphs zipped into 0.8 MB: the reader's XML tree of them needs far more than 64 MB.
  const bomb = await makeDocx(Array.from({ length: 300_000 }, (_, i) => ({ text: `p${i}` })));
  const r = await send('heavy', bomb, 'bomb.docx');
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.error).toMatchObject({
    code: 'DOCUMENT_NOT_READABLE',
    message: expect.stringContaining('more than 64 MB of memory (CAIRN_DOCUMENT_READ_MB)'),
  });
  expect(await stored('heavy')).toBeNull();
  delete process.env.CAIRN_DOCUMENT_READ_MB;
  const next = await send('heavy', small(), 'small.pdf');
  expect(next.status, JSON.stringify(next.body)).toBe(200);
});
