import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeDocx, makePdf } from './fixtures/documents.js';
import { mcpClient, toolJson } from './mcp-client.js';
import { startTestNode, type TestNode } from './node.js';

// memory_document through a real node: a file's type from its bytes, its text in reading order,
// stored and found again with citations; refusals before anything is stored.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');
type Block = { kind: string; page?: number; start: number; end: number };
/** A reply's blocks with the text each spans in the reply's `text` (UTF-8 bytes start..end). */
const blocksOf = (body: Record<string, unknown>) => {
  const text = Buffer.from(body.text as string);
  return (body.blocks as Block[]).map((b) => ({ ...b, text: text.subarray(b.start, b.end).toString() }));
};
const doc = (scope: string, bytes: Buffer | string, name: string, extra: object = {}) =>
  t.call('POST', '/v1/memory/document', { token: agent, body: { scope, content_base64: b64(bytes), name, ...extra } });

const REPORT = makePdf([
  [
    { text: 'Quarterly Report', size: 20, y: 720 },
    { text: 'Priya Raman leads the payments team at Acme Robotics. The refund', y: 690 },
    { text: 'service ships on Friday after the load test passes.', y: 677 },
    { text: 'Costs fell by a tenth this quarter.', y: 640 },
  ],
  [{ text: 'Appendix: the Oslo office opens in March.', y: 700 }],
]);

describe('reading', () => {
  it('reads a PDF in reading order, rebuilding paragraphs from layout, and stores it for recall and context', async () => {
    const r = await doc('pdf', REPORT, 'q3-report.pdf', { date: '2026-10-01' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      type: 'pdf',
      name: 'q3-report.pdf',
      already: false,
      sizes: { pages: 2, blocks: 4 },
    });
    expect(r.body.doc_id).toMatch(/^\d+$/);
    // A block is its place in `text`, never the text again (the reply carried the document twice).
    expect((r.body.blocks as object[]).some((b) => 'text' in b)).toBe(false);
    const blocks = blocksOf(r.body);
    expect(blocks.map((b) => [b.kind, b.page])).toEqual([
      ['heading', 1],
      ['paragraph', 1],
      ['paragraph', 1],
      ['paragraph', 2],
    ]);
    expect(blocks[1]?.text).toBe(
      'Priya Raman leads the payments team at Acme Robotics. The refund service ships on Friday after the load test passes.',
    );
    expect(blocks.map((b) => b.text)).toEqual([
      'Quarterly Report',
      'Priya Raman leads the payments team at Acme Robotics. The refund service ships on Friday after the load test passes.',
      'Costs fell by a tenth this quarter.',
      'Appendix: the Oslo office opens in March.',
    ]);

    const ctx = await t.call('POST', '/v1/memory/context', {
      token: agent,
      body: { scope: 'pdf', question: 'When does the refund service ship?', hops: 0 },
    });
    const item = (ctx.body.items as { text: string; citation: { source: { name: string } } }[])[0];
    expect(item?.text).toContain('ships on Friday');
    expect(item?.citation.source.name).toBe('q3-report.pdf');

    const again = await doc('pdf', REPORT, 'q3-report.pdf', { date: '2026-10-01' });
    expect(again.body).toMatchObject({ already: true, doc_id: r.body.doc_id });
  });

  it('reads two columns one after the other, under a title across both, with no words run together', async () => {
    const left = ['The storage engine keeps a', 'write-ahead log and syncs it', 'once for a group of writes.'];
    const right = ['The query planner picks the', 'cheapest index for every', 'lookup it serves.'];
    // Drawn line by line across the page, as many PDF writers do.
    const lines = [{ text: 'Atlas design notes for the whole team', size: 18, x: 56, y: 740 }];
    left.forEach((text, i) => {
      lines.push({ text, size: 11, x: 56, y: 700 - i * 13 });
      lines.push({ text: right[i] ?? '', size: 11, x: 316, y: 700 - i * 13 });
    });
    // Two strings drawn with a gap between them are two words; low in the left column, they end it.
    lines.push({ text: 'Costs', size: 11, x: 56, y: 600 }, { text: 'fell.', size: 11, x: 90, y: 600 });
    const r = await doc('columns', makePdf([lines]), 'atlas.pdf');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(blocksOf(r.body).map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Atlas design notes for the whole team'],
      ['paragraph', 'The storage engine keeps a write-ahead log and syncs it once for a group of writes.'],
      ['paragraph', 'Costs fell.'],
      ['paragraph', 'The query planner picks the cheapest index for every lookup it serves.'],
    ]);
  });

  it('reads two columns one after the other below a full-width abstract; a table in one column row by row', async () => {
    // Lines of about 40 characters at 10 pt fit a column (x 72 to 300, and 320 to 540).
    const left = Array.from({ length: 40 }, (_, i) => `Storage note ${i + 1}: the log syncs once.`);
    const right = Array.from({ length: 40 }, (_, i) => `Planner note ${i + 1}: the index is chosen.`);
    // Its last line is short: it stays with the abstract, not atop the left column.
    const abstract = [
      ...Array.from(
        { length: 7 },
        (_, i) => `Abstract line ${i + 1} runs across the whole page, over both of the columns that follow it.`,
      ),
      'It ends here.',
    ];
    const lines = [
      { text: 'Atlas: storage and planning', size: 18, x: 72, y: 740 },
      ...abstract.map((text, i) => ({ text, size: 10, x: 72, y: 710 - i * 12 })),
    ];
    left.forEach((text, i) => {
      lines.push({ text, size: 10, x: 72, y: 600 - i * 12 });
      lines.push({ text: right[i] ?? '', size: 10, x: 320, y: 600 - i * 12 });
    });
    const r = await doc('abstract', makePdf([lines]), 'atlas-abstract.pdf');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(blocksOf(r.body).map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Atlas: storage and planning'],
      ['paragraph', abstract.join(' ')],
      ['paragraph', left.join(' ')],
      ['paragraph', right.join(' ')],
    ]);

    // Labels and figures with a wide gap between them are a table, not two columns of prose.
    const table = makePdf([
      [
        { text: 'The quarter closed above plan on every line of the business this year.', y: 700 },
        { text: 'Revenue', y: 670 },
        { text: '$5.2M', x: 400, y: 670 },
        { text: 'Costs', y: 656 },
        { text: '$3.1M', x: 400, y: 656 },
        { text: 'Profit', y: 642 },
        { text: '$2.1M', x: 400, y: 642 },
        { text: 'The board meets again in March to set the plan for the next quarter.', y: 610 },
      ],
    ]);
    const tr = await doc('abstract', table, 'quarter.pdf');
    expect(blocksOf(tr.body).map((b) => b.text)).toEqual([
      'The quarter closed above plan on every line of the business this year.',
      'Revenue $5.2M Costs $3.1M Profit $2.1M',
      'The board meets again in March to set the plan for the next quarter.',
    ]);
  });

  it('reads DOCX headings, paragraphs and list items, HTML without its scripts, and plain text', async () => {
    const docx = await makeDocx([
      { text: 'Release plan', style: 'Heading1' },
      { text: 'We ship the refund service on Friday.' },
      { text: 'run the load test', list: true },
      { text: 'tag the release', list: true },
    ]);
    const d = await doc('docx', docx, 'plan.docx');
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body.type).toBe('docx');
    expect(blocksOf(d.body).map((b) => [b.kind, b.text])).toEqual([
      ['heading', 'Release plan'],
      ['paragraph', 'We ship the refund service on Friday.'],
      ['list_item', 'run the load test'],
      ['list_item', 'tag the release'],
    ]);

    const html =
      '<!DOCTYPE html><html><head><title>x</title><style>p{}</style><script>var secret = 1;</script></head>' +
      '<body><h2>Onboarding &amp; access</h2><p>Ask <b>Lin</b> for a badge.</p><ul><li>laptop</li><li>VPN</li></ul></body></html>';
    const h = await doc('html', html, 'onboarding.html');
    expect(h.body.type).toBe('html');
    expect(h.body.text).toBe('Onboarding & access\n\nAsk Lin for a badge.\n\nlaptop\n\nVPN');

    const txt = await doc('txt', '# Notes\n\nThe VPN needs a token.\n\n- one\n- two\n', 'notes.md');
    expect(txt.body.type).toBe('text');
    expect((txt.body.blocks as { kind: string }[]).map((b) => b.kind)).toEqual([
      'heading',
      'paragraph',
      'list_item',
      'list_item',
    ]);
  });

  it('stores no hidden DOCX text: not in the reply, the stored document, or context', async () => {
    const docx = await makeDocx(
      [
        {
          runs: [
            { text: 'Nadia Okafor runs the Lisbon office.' },
            { text: ' Her salary is 98000 euros.', hidden: true },
          ],
        },
        {
          runs: [
            { text: 'The project is on track' },
            { text: ' under codename Bluefin', style: 'Secret' },
            { text: '.' },
          ],
        },
        { text: 'Draft: layoffs are planned for May.', style: 'Note' },
        { runs: [{ text: 'The office opens at nine.', hidden: 'off' }], style: 'Note' },
      ],
      [
        { id: 'Secret', type: 'character', hidden: true },
        { id: 'Draft', type: 'paragraph', hidden: true },
        { id: 'Note', type: 'paragraph', basedOn: 'Draft' },
      ],
    );
    const r = await doc('hidden', docx, 'staff.docx');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Hidden directly, by a character style, by a paragraph style's base; `w:val="0"` shows again.
    expect(r.body.text).toBe(
      'Nadia Okafor runs the Lisbon office.\n\nThe project is on track.\n\nThe office opens at nine.',
    );
    const exported = await t.call('POST', '/v1/memory/export', { token: agent, body: { scope: 'hidden' } });
    const stored = (exported.body.records as { kind: string; text?: string }[]).filter((x) => x.kind === 'document');
    expect(stored.map((x) => x.text)).toEqual([r.body.text]);
    for (const question of [
      'What is the salary of Nadia Okafor?',
      'What is codename Bluefin?',
      'Are layoffs planned?',
    ]) {
      const ctx = await t.call('POST', '/v1/memory/context', { token: agent, body: { scope: 'hidden', question } });
      expect(ctx.status).toBe(200);
      // (the question's own words come back in `grounding.uncovered` and each item's `uncovered`:
      // only what the items say is looked at)
      const said = (ctx.body.items as Record<string, unknown>[]).map(({ uncovered: _, ...item }) => item);
      expect(JSON.stringify(said)).not.toMatch(/98000|salary|Bluefin|layoffs/);
    }
  });

  it('names a document sent again under another name as it is stored, not by the new name', async () => {
    const first = await doc('renamed', 'The Lisbon office opens at nine.', 'hours.txt', { date: '2026-11-02' });
    expect(first.body.source).toMatchObject({ kind: 'document', doc_id: first.body.doc_id, name: 'hours.txt' });
    const again = await doc('renamed', 'The Lisbon office opens at nine.', 'copy of hours.txt', { date: '2026-11-02' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ already: true, doc_id: first.body.doc_id, name: 'copy of hours.txt' });
    // The stored label, which citations show, is the first one.
    expect(again.body.source).toEqual(first.body.source);
    const ctx = await t.call('POST', '/v1/memory/context', {
      token: agent,
      body: { scope: 'renamed', question: 'When does the Lisbon office open?' },
    });
    expect((ctx.body.items as { citation: { source: unknown } }[])[0]?.citation.source).toEqual(first.body.source);
    // memory_remember answers the same way.
    const remembered = await t.call('POST', '/v1/memory/remember', {
      token: agent,
      body: { scope: 'renamed', content: 'The Lisbon office opens at nine.', date: '2026-11-02', source: 'chat' },
    });
    expect(remembered.body).toMatchObject({ already: true, doc_id: first.body.doc_id, source: first.body.source });
  });

  it('reads a text file that mentions the PDF header as text; a PDF behind a binary wrapper stays a PDF', async () => {
    const notes =
      'Notes on file formats.\n\nEvery PDF begins with the magic bytes %PDF-1.7 followed by a binary comment line.\n';
    const n = await doc('magic', notes, 'notes.txt');
    expect(n.status, JSON.stringify(n.body)).toBe(200);
    expect(n.body).toMatchObject({
      type: 'text',
      text: 'Notes on file formats.\n\nEvery PDF begins with the magic bytes %PDF-1.7 followed by a binary comment line.',
    });
    // A print job's PJL escape sequence before the header, as printers and spoolers leave it.
    const job = Buffer.concat([Buffer.from('\x1b%-12345X@PJL ENTER LANGUAGE=PDF\r\n', 'latin1'), REPORT]);
    const p = await doc('magic', job, 'job.prn');
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect(p.body).toMatchObject({ type: 'pdf', sizes: { pages: 2, blocks: 4 } });
  });

  it('answers sizes only for a long document', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} of a long handbook about deployments.`).join(
      '\n\n',
    );
    const r = await doc('long', long, 'handbook.txt');
    expect(r.status).toBe(200);
    expect(r.body.text).toBeUndefined();
    expect(r.body.blocks).toBeUndefined();
    expect(r.body.sizes).toMatchObject({ blocks: 400, text_bytes: Buffer.byteLength(long) });
  });
});

describe('refusals change nothing', () => {
  const cases: [string, Buffer | string, string, number, string][] = [
    [
      'a PNG named .txt',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      'notes.txt',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a truncated PDF', REPORT.subarray(0, REPORT.length - 200), 'cut.pdf', 422, 'DOCUMENT_CORRUPT'],
    [
      'an encrypted PDF',
      makePdf([[{ text: 'secret', y: 700 }]], { encrypted: true }),
      'locked.pdf',
      422,
      'DOCUMENT_NOT_READABLE',
    ],
    ['a PDF without text', makePdf([[]]), 'scan.pdf', 422, 'DOCUMENT_NOT_READABLE'],
  ];
  for (const [label, bytes, name, status, code] of cases) {
    it(`refuses ${label}`, async () => {
      const before = await t.txn();
      const r = await doc('refused', bytes, name);
      expect(r.status).toBe(status);
      expect(r.body.error?.code).toBe(code);
      expect(r.body.error?.details).toEqual([{ field: 'content_base64', message: expect.any(String) }]);
      expect(await t.txn()).toBe(before);
    });
  }

  it('reads XHTML as HTML, refuses RTF, and takes base64 as people paste it', async () => {
    const xhtml =
      '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body><p>Hello <i>there</i>.</p></body></html>';
    const x = await doc('paste', xhtml, 'page.xhtml');
    expect(x.body).toMatchObject({ type: 'html', text: 'Hello there.' });
    const rtf = await doc('refused', '{\\rtf1\\ansi Hello}', 'letter.rtf');
    expect(rtf.status).toBe(415);
    // MIME line breaks every 76 characters, and URL-safe base64 without padding.
    const body = 'Wrapped base64 from the base64 tool. '.repeat(6);
    const wrapped = b64(body).replace(/(.{76})/g, '$1\n');
    const w = await t.call('POST', '/v1/memory/document', {
      token: agent,
      body: { scope: 'paste', content_base64: wrapped, name: 'wrapped.txt' },
    });
    expect(w.body.text).toBe(body.trim());
    const url = Buffer.from('ümlauts? yes>').toString('base64url');
    const u = await t.call('POST', '/v1/memory/document', {
      token: agent,
      body: { scope: 'paste', content_base64: url, name: 'url.txt' },
    });
    expect(u.body.text).toBe('ümlauts? yes>');
  });

  it('says which encoding it refuses, and refuses an empty or blank file', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('The VPN needs a token.', 'utf16le')]);
    const latin1 = Buffer.from('Café au lait, naïve résumé.', 'latin1');
    const xlsx = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.from('xl/workbook.xml')]);
    const cases: [Buffer | string, string, number, string][] = [
      [utf16, 'UTF-16 text (by its byte order mark); send it as UTF-8', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [
        latin1,
        'text that is not valid UTF-8 (Latin-1 or Windows-1252?); send it as UTF-8',
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [xlsx, 'a ZIP archive without word/document.xml, so not a DOCX', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [' \n\t\r\n ', 'the document holds no text', 422, 'DOCUMENT_NOT_READABLE'],
    ];
    const before = await t.txn();
    for (const [bytes, message, status, code] of cases) {
      const r = await doc('refused', bytes, 'file.txt');
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error).toMatchObject({ code, message: expect.stringContaining(message) });
    }
    const empty = await doc('refused', '', 'empty.txt');
    expect(empty.status).toBe(422);
    expect(empty.body.error?.details).toEqual([{ field: 'content_base64', message: expect.any(String) }]);
    expect(await t.txn()).toBe(before);
  });

  it('refuses a truncated DOCX and base64 that is not base64', async () => {
    const docx = await makeDocx([{ text: 'Plan' }]);
    const cut = await doc('refused', docx.subarray(0, docx.length - 40), 'cut.docx');
    expect(cut.body.error?.code).toBe('DOCUMENT_CORRUPT');
    expect(cut.body.error?.message).toBe(
      'content_base64: not a readable DOCX: the ZIP container is truncated or damaged',
    );
    const bad = await t.call('POST', '/v1/memory/document', {
      token: agent,
      body: { scope: 'refused', content_base64: 'not base64!', name: 'x.txt' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.details).toEqual([{ field: 'content_base64', message: expect.any(String) }]);
  });
});

it('is a tool over MCP, with refusals as tool errors', async () => {
  const client = await mcpClient(t.url, agent);
  try {
    const ok = toolJson(
      await client.callTool({
        name: 'memory_document',
        arguments: { scope: 'mcp', content_base64: b64('The badge office opens at nine.'), name: 'badge.txt' },
      }),
    );
    expect(ok.isError).toBe(false);
    expect(ok.body).toMatchObject({ type: 'text', text: 'The badge office opens at nine.' });
    const refused = toolJson(
      await client.callTool({
        name: 'memory_document',
        arguments: { scope: 'mcp', content_base64: b64(Buffer.from([0, 1, 2, 3])), name: 'x.bin' },
      }),
    );
    expect(refused.isError).toBe(true);
    expect((refused.body.error as { code: string }).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  } finally {
    await client.close();
  }
});
