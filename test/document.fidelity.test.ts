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
