import { afterAll, beforeAll, expect, it } from 'vitest';

import { longPdf, makePdf } from './fixtures/documents.js';
import { startTestNode, type TestNode } from './node.js';

// Documents are read by a few reader threads; when more wait than they can read, the readers
// take turns between the callers (token and user), so one agent sending a pile of PDFs does not
// make another's one document wait for the whole pile.

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

it("another caller's document is read before a noisy caller's pile is", async () => {
  const ci = (await t.token({ agent: 'ci-bot' })).token;
  const claude = (await t.token({ agent: 'claude' })).token;
  const done: string[] = [];
  const send = (token: string, label: string, pdf: Buffer, headers: Record<string, string> = {}) =>
    t
      .call('POST', '/v1/memory/document', {
        token,
        headers,
        body: { scope: label, content_base64: pdf.toString('base64'), name: `${label}.pdf` },
      })
      .then((r) => {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        done.push(label);
      });
  const pile = longPdf(150);
  const heavy = Array.from({ length: 12 }, (_, i) => send(ci, `pile-${i}`, pile));
  // Sent once the pile is on its way: FIFO, it waited behind all twelve (11 or 12 finished first).
  await new Promise((r) => setTimeout(r, 100));
  const one = makePdf([[{ text: 'The release ships on Friday.', y: 700 }]]);
  const mine = send(claude, 'mine', one);
  // The same token for another end user takes its turn too.
  const other = send(ci, 'other-user', one, { 'x-cairn-user': 'bea' });
  await Promise.all([...heavy, mine, other]);
  const before = (label: string) => done.indexOf(label);
  expect(before('mine'), done.join(' ')).toBeLessThanOrEqual(6);
  expect(before('other-user'), done.join(' ')).toBeLessThanOrEqual(7);
}, 120_000);
