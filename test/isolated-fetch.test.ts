import { getEventListeners } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { isolatedFetch } from '../ts/cli/isolated-fetch.js';

// The fetch `cairn mcp` gives the SDK's client transport: one long-lived signal (the transport's)
// for every request, as the transport passes it, against a real loopback server.

let server: Server;
let url: string;
/** Replies held open by `/hold` until the test ends them. */
const held: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hold') {
      held.push(res);
      return;
    }
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('leaves one listener on the shared signal however many calls it made, so 1,600 calls warn of no leak', async () => {
  const shared = new AbortController();
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const f = isolatedFetch();
    for (let i = 0; i < 1600; i++) {
      const res = await f(`${url}/json`, { method: 'POST', body: '{}', signal: shared.signal });
      expect(await res.json()).toEqual({ ok: true });
    }
    // A warning is emitted on the next tick of the listener that passed the limit.
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
  expect(warnings).not.toContain('MaxListenersExceededWarning');
});

it('keeps one listener for 16 requests open at once (parallel tool calls), and aborts them all', async () => {
  const shared = new AbortController();
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  const before = held.length;
  try {
    const f = isolatedFetch();
    const pending = Array.from({ length: 16 }, () => f(`${url}/hold`, { signal: shared.signal }));
    await expect.poll(() => held.length - before).toBe(16);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    shared.abort();
    for (const p of pending) await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings).not.toContain('MaxListenersExceededWarning');
});

it('aborts a request still waiting for its reply when the shared signal aborts, then lets go of it', async () => {
  const shared = new AbortController();
  const pending = isolatedFetch()(`${url}/hold`, { signal: shared.signal });
  await expect.poll(() => held.length).toBeGreaterThan(0);
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
  shared.abort();
  await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
});

it('keeps an event stream abortable by the shared signal after its headers came', async () => {
  const shared = new AbortController();
  const res = await isolatedFetch()(`${url}/events`, { signal: shared.signal });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
  shared.abort();
  await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
});

it('passes a request without a signal through unchanged', async () => {
  const res = await isolatedFetch()(`${url}/json`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true });
});
