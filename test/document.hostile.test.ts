import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

import { makeDocx, makePdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// Files built to exhaust a reader: each is refused 422 DOCUMENT_NOT_READABLE before it is read
// through, nothing is stored, and the next document is read as usual.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());
afterEach(() => {
  delete process.env.CAIRN_DOCUMENT_READ_MB;
});

const send = (scope: string, bytes: Buffer | string, name: string) =>
  t.call('POST', '/v1/memory/document', {
    token: agent,
    body: { scope, content_base64: Buffer.from(bytes).toString('base64'), name },
  });

/** Sends a file that must be refused, and checks that nothing was stored and the node reads on. */
async function refused(bytes: Buffer | string, name: string, message: string): Promise<void> {
  const before = await t.txn();
  const r = await send('hostile', bytes, name);
  expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(422);
  expect(r.body.error).toMatchObject({
    code: 'DOCUMENT_NOT_READABLE',
    message: expect.stringContaining(message),
    details: [{ field: 'content_base64' }],
  });
  expect(await t.txn()).toBe(before);
  delete process.env.CAIRN_DOCUMENT_READ_MB;
  const next = await send('hostile', makePdf([[{ text: 'The refund service ships on Friday.', y: 700 }]]), 'ok.pdf');
  expect(next.status, JSON.stringify(next.body)).toBe(200);
}

it('refuses a PDF whose content stream unpacks past half the reader’s memory', async () => {
  // pdf.js unpacks streams outside the heap the limit bounds: a 2 MB file whose content unpacked
  // to 2 GB took the reader's process past 4 GB. Here 40 MB of padding (40 KB packed) against a
  // 64 MB reader, which before was read whole and stored.
  process.env.CAIRN_DOCUMENT_READ_MB = '64';
  const bomb = makePdf([[{ text: 'Hello from a very long page.', y: 700 }]], { padding: 40 * 1024 * 1024 });
  expect(bomb.length).toBeLessThan(100_000);
  await refused(bomb, 'bomb.pdf', 'its compressed streams unpack to more than 32 MB');
});

it('refuses a PDF bomb packed under other filters: hex over Flate, LZW', async () => {
  // Only Flate was measured at first: a filter in front of it, or LZW (some 1,000 to 1 here), let
  // the same bomb through.
  for (const packing of ['hex+flate', 'lzw'] as const) {
    process.env.CAIRN_DOCUMENT_READ_MB = '64';
    const bomb = makePdf([[{ text: 'Hello from a very long page.', y: 700 }]], { padding: 40 * 1024 * 1024, packing });
    expect(bomb.length).toBeLessThan(200_000);
    await refused(bomb, `bomb-${packing}.pdf`, 'its compressed streams unpack to more than 32 MB');
  }
});

it('reads a PDF whose packed streams fit, under each filter', async () => {
  for (const packing of ['flate', 'hex+flate', 'lzw'] as const) {
    const pdf = makePdf([[{ text: `Packed text reads as any other (${packing}).`, y: 700 }]], {
      padding: 100_000,
      packing,
    });
    const r = await send('packed', pdf, `packed-${packing}.pdf`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.text).toBe(`Packed text reads as any other (${packing}).`);
  }
});

it('refuses a DOCX whose XML unpacks past half the reader’s memory, before unpacking it', async () => {
  process.env.CAIRN_DOCUMENT_READ_MB = '64';
  // 40 MB of one paragraph, packed into some 40 KB.
  const bomb = await makeDocx([{ text: 'A'.repeat(40 * 1024 * 1024) }]);
  expect(bomb.length).toBeLessThan(200_000);
  await refused(bomb, 'bomb.docx', 'its XML unpacks to 41 MB, more than half the reader’s 64 MB');
});

it('refuses HTML nested 100,000 elements deep', async () => {
  // Read through, this took the reader 17 s (the parser's cost grows with the square of the depth).
  const deep = `<!DOCTYPE html><html><body>${'<div>'.repeat(100_000)}deep text${'</div>'.repeat(100_000)}</body></html>`;
  await refused(deep, 'deep.html', 'its elements nest more than 10000 deep');
  // Unclosed inline elements nest too.
  await refused(`<!DOCTYPE html><p>${'<b>'.repeat(200_000)}bold</p>`, 'unclosed.html', 'nest more than 10000 deep');
});
