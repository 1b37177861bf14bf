import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestNode, type TestNode } from './node.js';

// memory_document on HTML: text a reader never sees (hidden by attribute, by inline style, by
// aria-hidden, or in a template) is not extracted, so it is neither stored nor cited.

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
});
