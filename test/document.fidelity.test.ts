import { afterAll, beforeAll, expect, it } from 'vitest';

import { makeDocx, makePdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// What a reader sees is what is stored: CJK text in fonts a PDF does not embed, a DOCX footnote
// without its link back, words broken only by a soft hyphen.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());

const send = (scope: string, bytes: Buffer | string, name: string) =>
  t.call('POST', '/v1/memory/document', {
    token: agent,
    body: { scope, content_base64: Buffer.from(bytes).toString('base64'), name },
  });

it('reads Chinese set in a font the PDF names but does not embed', async () => {
  // Before, every line in such a font (most CJK PDFs use one) was read as nothing.
  const pdf = makePdf([
    [
      { text: 'Release notes', y: 700 },
      { text: '退款服务在周五上线。', cjk: true, y: 660 },
    ],
  ]);
  const r = await send('cjk', pdf, 'notes.pdf');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.text).toBe('Release notes\n\n退款服务在周五上线。');
  const ctx = await t.call('POST', '/v1/memory/context', {
    token: agent,
    body: { scope: 'cjk', question: '退款服务', hops: 0 },
  });
  const items = ctx.body.items as { text: string; citation: { span: { text: string } | null } }[];
  expect(items.map((i) => i.text).join('\n')).toContain('退款服务在周五上线。');
});

it('reads a DOCX footnote as its text, without the arrow that links back', async () => {
  const docx = await makeDocx([
    { runs: [{ text: 'The audit closed in May.', footnote: 'It found nothing to report.' }] },
  ]);
  const r = await send('notes', docx, 'audit.docx');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.text).toBe('The audit closed in May.[1]\n\nIt found nothing to report.');
});

it('stores a word broken only by a soft hyphen whole, and finds it', async () => {
  const html = '<!DOCTYPE html><p>Die Zusammen&shy;arbeit beginnt im Mai.</p>';
  const r = await send('soft', html, 'de.html');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.text).toBe('Die Zusammenarbeit beginnt im Mai.');
  // A PDF line that ends in a soft hyphen: the word goes on on the next line.
  const pdf = makePdf([
    [
      { text: 'The docu\u00ad', y: 700 },
      { text: 'mentation is done.', y: 687 },
    ],
  ]);
  const p = await send('soft', pdf, 'doc.pdf');
  expect(p.body.text).toBe('The documentation is done.');
  const ctx = await t.call('POST', '/v1/memory/context', {
    token: agent,
    body: { scope: 'soft', question: 'Zusammenarbeit', hops: 0 },
  });
  expect((ctx.body.items as { text: string }[]).map((i) => i.text)).toContain('Die Zusammenarbeit beginnt im Mai.');
});

it('leaves out running headers and footers, and parts paragraphs spaced a little wider than their lines', async () => {
  // Three pages as a report generator sets them: a header and a numbered footer in the margins;
  // lines 12 pt apart at 10 pt, paragraphs 18 pt apart (1.8 times the size).
  const para = (p: number, n: number) => [
    `Section ${p}.${n}: the refund service handled this`,
    `claim after a review by the payments team.`,
  ];
  const pages = [1, 2, 3].map((p) => {
    const lines: { text: string; size: number; y: number; x?: number }[] = [
      { text: 'ACME CONFIDENTIAL - Quarterly Report', size: 9, y: 760 },
      { text: `Page ${p} of 3`, size: 9, x: 280, y: 30 },
    ];
    let y = 720;
    for (const n of [1, 2, 3]) {
      for (const text of para(p, n)) {
        lines.push({ text, size: 10, y });
        y -= 12;
      }
      y -= 6;
    }
    return lines;
  });
  const r = await send('report', makePdf(pages), 'report.pdf');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const expected = [1, 2, 3].flatMap((p) => [1, 2, 3].map((n) => para(p, n).join(' ')));
  expect((r.body.text as string).split('\n\n')).toEqual(expected);

  // One page alone keeps its header and footer: nothing says they run.
  const one = await send('report', makePdf([pages[0] ?? []]), 'one-page.pdf');
  expect((one.body.text as string).split('\n\n')).toEqual([
    'ACME CONFIDENTIAL - Quarterly Report',
    ...expected.slice(0, 3),
    'Page 1 of 3',
  ]);
});

it('keeps a numbered line that stands where a header would on every page: its number is text', async () => {
  // One ticket a page: its number atop, set apart, is not a running header (only page numbers
  // are left out of the comparison). With every number left out, these pages read as nothing.
  const pages = [1001, 1002, 1003].map((n) => [
    { text: `Ticket ${n}`, size: 14, y: 740 },
    { text: `Seat ${n - 1000} in row B, valid on Friday.`, size: 10, y: 700 },
  ]);
  const r = await send('tickets', makePdf(pages), 'tickets.pdf');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect((r.body.text as string).split('\n\n')).toEqual([
    'Ticket 1001',
    'Seat 1 in row B, valid on Friday.',
    'Ticket 1002',
    'Seat 2 in row B, valid on Friday.',
    'Ticket 1003',
    'Seat 3 in row B, valid on Friday.',
  ]);
});
