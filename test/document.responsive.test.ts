import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { longPdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// memory_document reads a PDF off the event loop: while a large one is read, the node keeps
// answering everyone else.

let t: TestNode;
let agent: string;

beforeAll(async () => {
  t = await startTestNode();
  agent = (await t.token({ agent: 'claude' })).token;
});
afterAll(async () => t.stop());

it('answers other requests while it reads a large PDF', async () => {
  let reading = true;
  // 2,000 pages: about 1.7 MB, 0.85 MB of text; reading it takes seconds.
  const stored = t
    .call('POST', '/v1/memory/document', {
      token: agent,
      body: { scope: 'big', content_base64: longPdf(2000).toString('base64'), name: 'handbook.pdf' },
    })
    .finally(() => {
      reading = false;
    });
  // Health checks one after another until the document is stored. Read on the event loop, the
  // PDF held every request until it was done (about two seconds on a loaded 2-core machine), so
  // only checks answered while its body arrived could count, a few at most. Read off it, the
  // checks go on answering throughout (732 in one run here); a loaded machine slows the reading
  // and the checks alike. No time is measured.
  let answers = 0;
  while (reading) {
    const health = await t.call('GET', '/health', { token: null });
    expect(health.status).toBe(200);
    if (reading) answers++;
    await sleep(10);
  }
  const r = await stored;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ type: 'pdf', sizes: { pages: 2000 } });
  expect(answers).toBeGreaterThanOrEqual(20);
});
