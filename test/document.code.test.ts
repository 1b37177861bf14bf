import { afterAll, beforeAll, expect, it } from 'vitest';

import { makeDocx, makePdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// Code keeps its lines: an HTML `<pre>` and a Markdown code fence are stored line by line, where
// they were read as one run-on line; and a PDF line that ends in a compound's own hyphen keeps it.

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

type Block = { kind: string; preformatted?: true; start: number; end: number };

it('keeps the lines and indentation of an HTML <pre>, a <br> in it a line break', async () => {
  const html =
    '<!DOCTYPE html><p>Run the   migration\nfirst:</p>' +
    '<pre><code>if ready:\n    migrate()\n\n    report()  </code>\r\n<span>done()</span><br>exit()\n</pre>' +
    '<p>Then deploy.</p>';
  const r = await send('html', html, 'runbook.html');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const code = 'if ready:\n    migrate()\n\n    report()\ndone()\nexit()';
  expect(r.body.text).toBe(`Run the migration first:\n\n${code}\n\nThen deploy.`);
  const blocks = r.body.blocks as Block[];
  expect(blocks.map((b) => b.preformatted ?? false)).toEqual([false, true, false]);
  expect(
    Buffer.from(r.body.text as string)
      .subarray(blocks[1]?.start, blocks[1]?.end)
      .toString(),
  ).toBe(code);
});

it('keeps a Markdown code fence whole, blank lines and all, without its fence lines', async () => {
  const md = [
    '# Deploy',
    '',
    'Build it',
    'with make:',
    '',
    '```sh',
    'make build',
    '',
    '  make test',
    '```',
    'After the fence.',
    '',
    '~~~~',
    'a ``` inside a tilde fence',
    '~~~',
    'still code',
    '~~~~~',
    '',
    '```unclosed',
    'runs to the end',
  ].join('\r\n');
  const r = await send('md', md, 'deploy.md');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const blocks = r.body.blocks as Block[];
  const text = Buffer.from(r.body.text as string);
  expect(blocks.map((b) => text.subarray(b.start, b.end).toString())).toEqual([
    'Deploy',
    'Build it with make:',
    'make build\n\n  make test',
    'After the fence.',
    'a ``` inside a tilde fence\n~~~\nstill code',
    'runs to the end',
  ]);
  expect(blocks.map((b) => b.preformatted === true)).toEqual([false, false, true, false, true, true]);
  // Found by its words as any passage is.
  const ctx = await t.call('POST', '/v1/memory/context', {
    token: agent,
    body: { scope: 'md', question: 'make test', hops: 0 },
  });
  expect((ctx.body.items as { text: string }[]).map((i) => i.text).join('\n')).toContain('make build');
});

it('keeps the hyphen of a compound broken at a line end, and joins a word broken at a syllable', async () => {
  const pdf = makePdf([
    [
      { text: 'The build is self-', y: 700 },
      { text: 'contained; its docu-', y: 687 },
      { text: 'mentation says the self-contained build', y: 674 },
      { text: 'came from the Anglo-', y: 661 },
      { text: 'Saxon team in 2019-', y: 648 },
      { text: '2020 as a non-', y: 635 },
      { text: 'trivial nontrivial task.', y: 622 },
    ],
  ]);
  const r = await send('pdf', pdf, 'build.pdf');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.text).toBe(
    'The build is self-contained; its documentation says the self-contained build came from the ' +
      'Anglo-Saxon team in 2019-2020 as a nontrivial nontrivial task.',
  );
});

it('keeps the lines of a DOCX code block: a run of paragraphs in a code style', async () => {
  const docx = await makeDocx(
    [
      { text: 'Install it:' },
      { text: 'npm install', style: 'Code' },
      { text: '  npm test', style: 'Code' },
      { text: 'Then ship.' },
    ],
    [{ id: 'Code', type: 'paragraph' }],
  );
  const r = await send('docx', docx, 'install.docx');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.text).toBe('Install it:\n\nnpm install\n  npm test\n\nThen ship.');
  expect((r.body.blocks as Block[]).map((b) => b.preformatted === true)).toEqual([false, true, false]);
});
