// The floor of one MCP tool call with the official SDK on both ends and nothing of Cairn's: the SDK's
// Streamable HTTP server transport (JSON replies, as the node runs it) on bare node:http, a tool
// that returns a fixed ~2 KB reply from the SDK's `Server`, called by the SDK client over a
// keep-alive agent, in one process as bench/node.bench.mjs runs Cairn. What it prints bounds from
// below any MCP server built that way here. Not part of `npm run bench`: `node bench/mcp-floor.mjs`
// (CAIRN_BENCH_CALLS, default 3,000).
import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { keepAliveFetch } from './lib/keepalive-fetch.mjs';
import { percentile } from './lib/report.mjs';

const CALLS = Number(process.env.CAIRN_BENCH_CALLS ?? 3000);
const fact = (i) => ({
  id: String(i),
  subject: 'Ada Lovelace',
  relation: 'works_with',
  object: 'Charles Babbage',
  citation: { source: { kind: 'asserted', ingested_at: new Date().toISOString() }, span: null },
  recorded_at: new Date().toISOString(),
});
const body = { facts: Array.from({ length: 6 }, (_, i) => fact(i)) };

function toolServer() {
  const server = new Server({ name: 'floor', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
  }));
  return server;
}

/** A listener whose POST bodies go to the SDK transport. */
async function sdkTransport() {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
  });
  await toolServer().connect(transport);
  return (req, res, parsed) => transport.handleRequest(req, res, parsed);
}

async function floor(name, handler) {
  const listener = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => handler(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined));
  });
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const client = new Client({ name: 'floor', version: '1' });
  const url = new URL(`http://127.0.0.1:${listener.address().port}/mcp`);
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: keepAliveFetch }));
  const call = () => client.callTool({ name: 'recall', arguments: { subject: 'Ada Lovelace' } });
  for (let i = 0; i < 300; i++) await call();
  const times = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  console.log(
    `SDK client + SDK Server on ${name}, keep-alive, one call at a time: p50 ${percentile(times, 50).toFixed(3)} ms, ` +
      `p95 ${percentile(times, 95).toFixed(3)} ms, ${((used.user + used.system) / CALLS).toFixed(0)} µs of CPU a call`,
  );
  await client.close();
  // The keep-alive agent holds its sockets open: end them so the listener closes.
  listener.closeAllConnections();
  listener.close();
}

await floor('the SDK transport', await sdkTransport());
