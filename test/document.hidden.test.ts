import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_document on HTML: text a reader never sees (hidden by attribute, by inline style, by
// aria-hidden, in a script or a template) is not extracted, so it is neither stored nor cited,
// however the page opens.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());

const doc = (scope: string, html: string) =>
  t.call('POST', '/v1/memory/document', {
    token: agent,
    body: { scope, content_base64: Buffer.from(html).toString('base64'), name: 'page.html' },
  });

describe('hidden HTML', () => {
  it('is left out; what a reader sees stays, in order', async () => {
    const html =
      '<!DOCTYPE html><html><body><h1>Release plan</h1>' +
      '<p style="display:none">HIDDENSTYLE one</p>' +
      '<p style="color: red; DISPLAY : none !important">HIDDENCAPS two</p>' +
      '<p style="visibility:hidden">HIDDENVIS three</p>' +
      '<div hidden><p>HIDDENATTR four</p><ul><li>HIDDENITEM five</li></ul></div>' +
      '<p>We ship on <span aria-hidden="true">HIDDENARIA</span>Friday.</p>' +
      '<template><p>HIDDENTEMPLATE six</p></template>' +
      '<section hidden="until-found"><p>Found on search.</p></section>' +
      '<p style="display: block">Shown <b>too</b>.</p><p aria-hidden="false">Also shown.</p>' +
      '</body></html>';
    const r = await doc('hidden', html);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.text).toBe('Release plan\n\nWe ship on Friday.\n\nFound on search.\n\nShown too.\n\nAlso shown.');
    const ctx = await t.call('POST', '/v1/memory/context', {
      token: agent,
      body: { scope: 'hidden', question: 'HIDDENSTYLE HIDDENATTR HIDDENARIA' },
    });
    const texts = (ctx.body.items as { text: string }[]).map((i) => i.text).join('\n');
    expect(texts).not.toMatch(/HIDDEN/);
  });

  it('is left out of HTML that opens without <html>: a page from its <meta>, a fragment', async () => {
    const page =
      '<meta charset="utf-8">\n<title>Quarterly memo</title>\n<h1>Memo</h1>\n<p>Revenue grew in Q3.</p>\n' +
      '<script>trackUser("SCRIPTLEAK")</script>\n';
    const p = await doc('bare', page);
    expect(p.status, JSON.stringify(p.body)).toBe(200);
    expect(p.body).toMatchObject({ type: 'html', text: 'Memo\n\nRevenue grew in Q3.' });
    const fragment =
      '\uFEFF  <!-- saved from the wiki -->\n<div><p>Badges are <b>renewed</b> in May.</p>' +
      '<style>.x{}</style><p hidden>HIDDENFRAGMENT</p></div>';
    const f = await doc('bare', fragment);
    expect(f.body).toMatchObject({ type: 'html', text: 'Badges are renewed in May.' });
    const ctx = await t.call('POST', '/v1/memory/context', {
      token: agent,
      body: { scope: 'bare', question: 'How did revenue grow, and when are badges renewed?' },
    });
    const texts = (ctx.body.items as { text: string }[]).map((i) => i.text).join('\n');
    expect(texts).toContain('Revenue grew in Q3.');
    expect(texts).not.toMatch(/SCRIPTLEAK|trackUser|HIDDENFRAGMENT|<p>|<div>|charset/);
  });

  it('leaves text that only mentions markup as text', async () => {
    const notes = '<T> in a signature is a type parameter.\n\n<note>XML is not HTML.</note>\n';
    const r = await doc('notes', notes);
    expect(r.body).toMatchObject({
      type: 'text',
      text: '<T> in a signature is a type parameter.\n\n<note>XML is not HTML.</note>',
    });
  });

  it('leaves Markdown that opens with an HTML banner as text, its paragraphs apart', async () => {
    const readme =
      '<div align="center">\n  <img src="logo.png" alt="Cairn">\n</div>\n\n# Cairn\n\n' +
      'A memory layer that agents share.\n\n## Install\n\nRun npm install, then npx cairn serve.\n';
    const r = await doc('readme', readme);
    expect(r.body).toMatchObject({ type: 'text' });
    expect(r.body.text).toContain('A memory layer that agents share.\n\nInstall\n\nRun npm install');
  });
});
