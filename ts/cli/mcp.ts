import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { findRunningNode, VERSION } from '../server/node.js';

/** Arguments of `cairn mcp`. */
export interface McpArgs {
  dataDir: string;
  url: string | undefined;
}

const say = (line: string) => process.stderr.write(`cairn mcp: ${line}\n`);

/** Starts `cairn serve` on `dataDir` in the background and waits (≤ 15 s) for its `node.json`. */
async function startBackgroundNode(dataDir: string): Promise<string | null> {
  mkdirSync(dataDir, { recursive: true });
  const log = openSync(join(dataDir, 'node.log'), 'a');
  const main = fileURLToPath(new URL('./main.js', import.meta.url));
  const child = spawn(process.execPath, [main, 'serve', '--data-dir', dataDir], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  for (let i = 0; i < 150; i++) {
    const node = findRunningNode(dataDir);
    if (node !== null) return node.url;
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

/**
 * `cairn mcp`: an MCP server on stdio that forwards every request to a node over Streamable HTTP
 * (the node from `--url`, else the data dir's `node.json`, else one started in the background),
 * authenticated with `CAIRN_TOKEN`; `CAIRN_USER`/`CAIRN_SCOPE` become the identity headers.
 */
export async function runMcp(args: McpArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const token = env.CAIRN_TOKEN;
  if (token === undefined || token === '') {
    say('set CAIRN_TOKEN to a token of the node (make one: `cairn token create --agent NAME`)');
    return 2;
  }
  let url = args.url ?? findRunningNode(args.dataDir)?.url;
  if (url === undefined) {
    say(`no node runs on ${args.dataDir}; starting one in the background (log: ${join(args.dataDir, 'node.log')})`);
    url = (await startBackgroundNode(args.dataDir)) ?? undefined;
    if (url === undefined) {
      say(`the node did not start; run \`cairn serve --data-dir ${args.dataDir}\` and see its output`);
      return 1;
    }
  }
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (env.CAIRN_USER) headers['x-cairn-user'] = env.CAIRN_USER;
  if (env.CAIRN_SCOPE) headers['x-cairn-scope'] = env.CAIRN_SCOPE;
  const client = new Client({ name: 'cairn-mcp-bridge', version: VERSION });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL('/v1/mcp', url), { requestInit: { headers } }));
  } catch (err) {
    say(`cannot reach the node at ${url}: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  const instructions = client.getInstructions();
  const server = new Server(
    { name: 'cairn', title: 'Cairn memory', version: VERSION },
    { capabilities: { tools: { listChanged: false } }, ...(instructions === undefined ? {} : { instructions }) },
  );
  server.setRequestHandler(ListToolsRequestSchema, (req) => client.listTools(req.params));
  server.setRequestHandler(CallToolRequestSchema, (req) => client.callTool(req.params));
  const done = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  // The SDK's stdio transport does not watch for end of input; the client closing stdin ends us.
  process.stdin.once('end', () => void server.close());
  await done;
  await client.close().catch(() => undefined);
  return 0;
}
