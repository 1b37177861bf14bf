// The node end to end: recall and context over HTTP and over MCP (Streamable HTTP) at 100k facts,
// p50/p95 of sequential calls and requests/s with 16 in flight (autocannon for HTTP, a pool of SDK
// calls for MCP); then Cairn over MCP against the MCP reference memory server
// (@modelcontextprotocol/server-memory, stdio, its search_nodes/open_nodes) on the same entities at
// 1k and 10k: both are driven by the official SDK client, one call at a time. Cairn is measured
// twice: through the SDK's Streamable HTTP transport on Node's fetch, each request given its own
// abort signal as `cairn mcp` does (ts/cli/isolated-fetch.ts: on the transport's one shared signal
// Node's fetch leaves a listener per call, and each call is slower than the last), and through the
// same transport given a keep-alive `node:http` fetch (bench/lib/keepalive-fetch.mjs), which shows
// what the node answers in without the per-call cost of Node's fetch.
// Sizes: CAIRN_BENCH_FACTS (default 100,000), CAIRN_BENCH_SECONDS per throughput phase (default 5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import autocannon from 'autocannon';

import { isolatedFetch } from '../dist/cli/isolated-fetch.js';
import { startNode } from '../dist/server/node.js';
import { generateGraph, rng } from './lib/graph-data.mjs';
import { keepAliveFetch } from './lib/keepalive-fetch.mjs';
import { fmt, percentile, ratioLine, saveResults, table } from './lib/report.mjs';

const FACTS = Number(process.env.CAIRN_BENCH_FACTS ?? 100_000);
const SECONDS = Number(process.env.CAIRN_BENCH_SECONDS ?? 5);
const SAMPLES = 500;
/** Untimed calls a Cairn client makes before its calls against the reference are timed (see `sample`). */
const CAIRN_WARM = 1000;
const CONCURRENCY = 16;
const TOKEN = `cairn_bench-${'x'.repeat(40)}`;
const REFERENCE_SERVER = new URL('./node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url);

async function node(dir) {
  return startNode({ dataDir: dir, port: 0, adminToken: TOKEN, logLevel: 'silent', rateLimit: 1e9 });
}

async function post(url, verb, body, scope) {
  const res = await fetch(`${url}/v1/memory/${verb}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ scope, ...body }),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${verb}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

async function loadGraph(url, scope, ents, rels) {
  for (let i = 0; i < ents.length; i += 1000) {
    await post(url, 'remember', { facts: { entities: ents.slice(i, i + 1000), relations: [] } }, scope);
  }
  for (let i = 0; i < rels.length; i += 5000) {
    const relations = rels
      .slice(i, i + 5000)
      .map((r) => ({ source: ents[r.source].name, target: ents[r.target].name, type: r.type }));
    await post(url, 'remember', { facts: { entities: [], relations } }, scope);
  }
}

/**
 * The official SDK client over Streamable HTTP on Node's fetch (one abort signal a request, as the
 * `cairn mcp` bridge sends them); `keepAlive` swaps Node's fetch for a keep-alive agent.
 */
async function mcpClient(url, { keepAlive = false } = {}) {
  const client = new Client({ name: 'cairn-bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    fetch: keepAlive ? keepAliveFetch : isolatedFetch(),
  });
  await client.connect(transport);
  return client;
}

async function tool(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r;
}

/**
 * p50/p95 of `run` over `names`, one call at a time, after `warm` calls (cycling `names`) that are
 * not timed. A Cairn client is warmed for 1,000 calls: its transport code is only optimised by V8
 * after some hundreds, and until then the measure is of the JIT, not of the node (at 20 calls the
 * 1k-entity p50 came out above the 10k one). The reference server does a whole-file read and
 * parse per call, hot from its first calls, and each takes tens of ms: 20 warm it.
 */
async function sample(run, names, warm = 20) {
  for (let i = 0; i < warm; i++) await run(names[i % names.length]);
  const times = [];
  for (const n of names) {
    const t = performance.now();
    await run(n);
    times.push(performance.now() - t);
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function throughput(run, names) {
  let i = 0;
  let done = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        await run(names[i++ % names.length]);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

async function autocannonRate(url, verb, bodies) {
  let i = 0;
  const result = await autocannon({
    url: `${url}/v1/memory/${verb}`,
    method: 'POST',
    connections: CONCURRENCY,
    duration: SECONDS,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[i++ % bodies.length] }) }],
  });
  if (result.non2xx > 0) throw new Error(`${verb}: ${result.non2xx} non-2xx replies under load`);
  return result.requests.average;
}

/** Section 1: recall and context at FACTS facts, over HTTP and MCP. */
async function atScale(url) {
  const scope = 'scale';
  const { ents, rels } = generateGraph(Math.ceil(FACTS / 3), FACTS, 5);
  const t = performance.now();
  await loadGraph(url, scope, ents, rels);
  const loadSeconds = (performance.now() - t) / 1000;
  const rand = rng(3);
  const names = Array.from({ length: SAMPLES }, () => ents[Math.floor(rand() * ents.length)].name);
  const questions = names.map((n) => `Who works with ${n}?`);
  const httpRecall = await sample((n) => post(url, 'recall', { subject: n }, scope), names);
  const httpContext = await sample((q) => post(url, 'context', { question: q }, scope), questions);
  const httpRecallRate = await autocannonRate(
    url,
    'recall',
    names.map((n) => JSON.stringify({ scope, subject: n })),
  );
  const httpContextRate = await autocannonRate(
    url,
    'context',
    questions.map((q) => JSON.stringify({ scope, question: q })),
  );
  const client = await mcpClient(url);
  const mcpRecall = await sample((n) => tool(client, 'memory_recall', { scope, subject: n }), names);
  const mcpContext = await sample((q) => tool(client, 'memory_context', { scope, question: q }), questions);
  const mcpRecallRate = await throughput((n) => tool(client, 'memory_recall', { scope, subject: n }), names);
  const mcpContextRate = await throughput((q) => tool(client, 'memory_context', { scope, question: q }), questions);
  await client.close();
  return {
    loadSeconds,
    http: { recall: { ...httpRecall, rps: httpRecallRate }, context: { ...httpContext, rps: httpContextRate } },
    mcp: { recall: { ...mcpRecall, rps: mcpRecallRate }, context: { ...mcpContext, rps: mcpContextRate } },
  };
}

/** Section 2: the same entities in Cairn (MCP) and in the reference memory server (MCP over stdio). */
async function againstReference(url, size, dir) {
  const scope = `ref-${size}`;
  const { ents, rels } = generateGraph(size, size * 2, 9);
  await loadGraph(url, scope, ents, rels);
  const reference = new Client({ name: 'cairn-bench', version: '1.0.0' });
  await reference.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [REFERENCE_SERVER.pathname],
      env: { ...process.env, MEMORY_FILE_PATH: join(dir, `reference-${size}.jsonl`) },
      stderr: 'ignore',
    }),
  );
  for (let i = 0; i < ents.length; i += 1000) {
    const entities = ents.slice(i, i + 1000).map((e) => ({ name: e.name, entityType: e.type, observations: [] }));
    await tool(reference, 'create_entities', { entities });
  }
  for (let i = 0; i < rels.length; i += 1000) {
    const relations = rels
      .slice(i, i + 1000)
      .map((r) => ({ from: ents[r.source].name, to: ents[r.target].name, relationType: r.type }));
    await tool(reference, 'create_relations', { relations });
  }
  const rand = rng(size);
  const names = Array.from({ length: 200 }, () => ents[Math.floor(rand() * ents.length)].name);
  const client = await mcpClient(url);
  const cairnRecall = await sample((n) => tool(client, 'memory_recall', { scope, subject: n }), names, CAIRN_WARM);
  const keptAlive = await mcpClient(url, { keepAlive: true });
  const cairnRecallKeepAlive = await sample(
    (n) => tool(keptAlive, 'memory_recall', { scope, subject: n }),
    names,
    CAIRN_WARM,
  );
  await keptAlive.close();
  const refSearch = await sample((n) => tool(reference, 'search_nodes', { query: n }), names);
  const refOpen = await sample((n) => tool(reference, 'open_nodes', { names: [n] }), names);
  await client.close();
  await reference.close();
  return { cairnRecall, cairnRecallKeepAlive, refSearch, refOpen };
}

const root = mkdtempSync(join(tmpdir(), 'cairn-node-bench-'));
console.log(`node bench: ${fmt(FACTS)} facts, ${SAMPLES} sampled calls, ${CONCURRENCY} in flight for ${SECONDS}s`);
const running = await node(join(root, 'node'));
try {
  const scale = await atScale(running.url);
  const small = await againstReference(running.url, 1_000, root);
  const large = await againstReference(running.url, 10_000, root);
  const ms = (s) => `${fmt(s.p50, 2)} / ${fmt(s.p95, 2)}`;
  table(
    [`at ${fmt(FACTS)} facts`, 'p50 / p95 ms', 'requests/s'],
    [
      ['HTTP memory_recall', ms(scale.http.recall), fmt(scale.http.recall.rps)],
      ['HTTP memory_context', ms(scale.http.context), fmt(scale.http.context.rps)],
      ['MCP memory_recall', ms(scale.mcp.recall), fmt(scale.mcp.recall.rps)],
      ['MCP memory_context', ms(scale.mcp.context), fmt(scale.mcp.context.rps)],
    ],
  );
  table(
    ['p50 / p95 ms, one call at a time', '1k entities', '10k entities'],
    [
      ['cairn memory_recall (MCP HTTP, Node fetch)', ms(small.cairnRecall), ms(large.cairnRecall)],
      ['cairn memory_recall (MCP HTTP, keep-alive)', ms(small.cairnRecallKeepAlive), ms(large.cairnRecallKeepAlive)],
      ['reference search_nodes (stdio)', ms(small.refSearch), ms(large.refSearch)],
      ['reference open_nodes (stdio)', ms(small.refOpen), ms(large.refOpen)],
    ],
  );
  const ratios = {
    searchNodesOverCairnAt10k: large.refSearch.p50 / large.cairnRecall.p50,
    openNodesOverCairnAt10k: large.refOpen.p50 / large.cairnRecall.p50,
    searchNodesOverCairnKeepAliveAt10k: large.refSearch.p50 / large.cairnRecallKeepAlive.p50,
    openNodesOverCairnKeepAliveAt10k: large.refOpen.p50 / large.cairnRecallKeepAlive.p50,
    cairn10kOver1k: large.cairnRecall.p50 / small.cairnRecall.p50,
  };
  console.log('\nratios');
  console.log(ratioLine('reference search_nodes / cairn recall, 10k', ratios.searchNodesOverCairnAt10k, 50));
  console.log(ratioLine('reference open_nodes / cairn recall, 10k', ratios.openNodesOverCairnAt10k, 50));
  console.log(
    ratioLine('reference search_nodes / cairn recall, 10k, keep-alive', ratios.searchNodesOverCairnKeepAliveAt10k, 50),
  );
  console.log(
    ratioLine('reference open_nodes / cairn recall, 10k, keep-alive', ratios.openNodesOverCairnKeepAliveAt10k, 50),
  );
  console.log(ratioLine('cairn recall p50 10k / 1k (flat: about 1)', ratios.cairn10kOver1k, 1.5, false));
  console.log(`(load of ${fmt(FACTS)} facts over HTTP: ${scale.loadSeconds.toFixed(1)} s)`);
  saveResults('node', {
    facts: FACTS,
    concurrency: CONCURRENCY,
    secondsPerPhase: SECONDS,
    scale,
    small,
    large,
    ratios,
  });
} finally {
  await running.close();
  rmSync(root, { recursive: true, force: true });
}
