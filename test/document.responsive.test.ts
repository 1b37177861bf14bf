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

/**
 * The longest the node may go without answering while the PDF is read. Read on the event loop,
 * this PDF held every request for about two seconds on a loaded 2-core machine; read off it, the
 * longest stretch there was about 100 ms with three such tests running at once.
 */
const PROMPT_MS = 400;

it('answers other requests promptly while it reads a large PDF', async () => {
  let reading = true;
  // 2,000 pages: about 1.7 MB, 0.85 MB of text.
  const stored = t
    .call('POST', '/v1/memory/document', {
      token: agent,
      body: { scope: 'big', content_base64: longPdf(2000).toString('base64'), name: 'handbook.pdf' },
    })
    .finally(() => {
      reading = false;
    });
  // A health check every 10 ms: the longest stretch between two answers is how long the node
  // kept everyone else waiting.
  let answered = performance.now();
  let longest = 0;
  while (reading) {
    const health = await t.call('GET', '/health', { token: null });
    expect(health.status).toBe(200);
    longest = Math.max(longest, performance.now() - answered);
    answered = performance.now();
    await sleep(10);
  }
  const r = await stored;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ type: 'pdf', sizes: { pages: 2000 } });
  expect(longest).toBeLessThan(PROMPT_MS);
});
