import { join } from 'node:path';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import { nonFinitePath, OVERFLOW, problemError, UNDERFLOW } from '../protocol/body-problem.js';
import { Name256 } from '../protocol/fields.js';
import { encodeIdentityHeader } from '../protocol/identity-header.js';
import { onToolCall } from '../server/mcp-call.js';
import { findRunningNode } from '../server/node-file.js';
import { protocolError } from '../server/rpc-error.js';
import { VERSION } from '../server/version.js';
import { startBackgroundNode } from './background-node.js';
import { storeProblem } from './data-dir.js';
import { CliFailure } from './failure.js';
import { identityRefusal } from './mcp-identity.js';
import { NodeLink } from './mcp-link.js';
import { asToolError, cannotConnect, failureBody } from './mcp-refusal.js';
import { nodeWaitMs } from './node-wait.js';
import { keyed, repeatable, unreplayed } from './repeatable.js';
import { watchUnderflows } from './stdin-underflow.js';
import { StdioLines } from './stdio-lines.js';

/** Arguments of `cairn mcp`. */
export interface McpArgs {
  dataDir: string;
  url: string | undefined;
}

/** The JSON-RPC code (implementation-defined server error range) of a request the node refused. */
const REFUSED = -32001;

const say = (line: string) => process.stderr.write(`cairn mcp: ${line}\n`);

/**
 * A protocol error from the node, passed on as the node sent it (without the client's prefix); a
 * refusal by the node's HTTP layer (say, a revoked token on `tools/list`), or a node gone or not
 * answering, as its §3 error: the code first in the message, the body as data.
 */
function unwrap(err: unknown, url: string, restarts: boolean): never {
  if (err instanceof McpError) throw protocolError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  const body = failureBody(err, url, restarts);
  if (body !== null) throw protocolError(REFUSED, `${body.error.code}: ${body.error.message}`, body);
  throw err;
}

/**
 * A tool call whose arguments hold a number a double cannot hold refused here, as the node
 * refuses it over HTTP: the SDK parsed the stdio line, making `1e400` Infinity (which forwarding
 * would send as null: stored as null, a merge deleting the key) and `1e-400` 0 (`lost`: its path,
 * found in the line by `watchUnderflows`). Null when the arguments are fine.
 */
function numberRefusal(args: unknown, lost: (string | number)[] | undefined) {
  const overflow = nonFinitePath(args);
  const problem =
    overflow !== undefined
      ? { path: overflow, message: OVERFLOW }
      : lost !== undefined
        ? { path: lost, message: UNDERFLOW }
        : undefined;
  if (problem === undefined) return null;
  const body = problemError(problem).body();
  return { content: [{ type: 'text' as const, text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** What the bridge says when its node had to take a free port: where it is, and how to pin one. */
function anyPortNote(url: string): string {
  return `another program listens on port 4000, so the node listens at ${url} (the bridge finds it in node.json; set CAIRN_PORT in this client's config to choose a port)`;
}

/**
 * Starts a node on `dataDir` in the background once the one the bridge used is gone, unless one
 * runs there by now; rejects with UNAVAILABLE saying why none started.
 */
async function startAgain(dataDir: string): Promise<void> {
  if (findRunningNode(dataDir) !== null) return;
  const log = join(dataDir, 'node.log');
  say(`the node on ${dataDir} is gone; starting one again in the background (log: ${log})`);
  const started = await startBackgroundNode(dataDir);
  if (!('failed' in started)) {
    if (started.anyPort === true) say(anyPortNote(started.url));
    return;
  }
  say(`the node did not start: ${started.failed.message}`);
  const message =
    `no node runs on ${dataDir} and the bridge could not start one: ${started.failed.message}` +
    (started.failed.held ? '' : `; the user runs \`cairn serve --data-dir ${dataDir}\` to see why (log: ${log})`);
  throw new CliFailure('UNAVAILABLE', message);
}

/**
 * `cairn mcp`: an MCP server on stdio that forwards every request to a node over Streamable HTTP
 * (the node from `--url`, else the data dir's `node.json`, else one started in the background,
 * and started again when it is gone: `startAgain`),
 * authenticated with `CAIRN_TOKEN`; `CAIRN_USER`/`CAIRN_SCOPE` become the identity headers. When
 * the node loses the bridge's session (a restart, eviction at the session cap, the idle timeout),
 * the bridge opens a new one and re-sends the request: the stdio client never sees it. A request
 * whose connection closed before the reply may have run: it is re-sent only when that is safe
 * (`repeatable`), else the client gets UNAVAILABLE saying its outcome is unknown. A note write or
 * handoff sent without an `idempotencyKey` gets one of the bridge's (`keyed`), so it is safe.
 */
export async function runMcp(args: McpArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const token = env.CAIRN_TOKEN;
  if (token === undefined || token === '') {
    say('set CAIRN_TOKEN to a token of the node (make one: `cairn token create --agent NAME`)');
    return 2;
  }
  // A URL that is no URL is bad usage (2), not a node that could not be reached (1).
  if (args.url !== undefined && !/^https?:$/.test(URL.parse(args.url)?.protocol ?? '')) {
    say(`--url: give the node's URL, as http://HOST:PORT, got ${JSON.stringify(args.url)}`);
    return 2;
  }
  const answerMs = nodeWaitMs(env);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  // Checked here, as the node would: a bad name is the variable's fault, not an unreachable node.
  for (const [variable, header] of [
    ['CAIRN_USER', 'x-cairn-user'],
    ['CAIRN_SCOPE', 'x-cairn-scope'],
  ] as const) {
    const name = env[variable];
    if (!name) continue;
    const ok = Name256.safeParse(name);
    if (!ok.success) {
      say(
        `${variable}: ${ok.error.issues[0]?.message ?? 'invalid'} (1–256 bytes of UTF-8, no ":", no control characters, no whitespace at either end)`,
      );
      return 2;
    }
    // Any name, in a form fetch can send (it takes only ByteStrings): UTF-8'' and its bytes
    // percent-encoded when it is not plain ASCII; the node decodes it back (docs/api.md).
    headers[header] = encodeIdentityHeader(name);
  }
  let url = args.url ?? findRunningNode(args.dataDir)?.url;
  if (url === undefined) {
    // A node started on a data dir that holds no store would make a new one (its admin token only
    // in node.log) and refuse CAIRN_TOKEN, a token of some other store, and keep running there:
    // a mistyped --data-dir left a stray store and a node holding the port.
    const problem = storeProblem(
      args.dataDir,
      `check --data-dir (or CAIRN_DATA_DIR), or run \`cairn init --data-dir ${args.dataDir}\` and give the bridge a token made there (\`cairn token create --agent NAME\`)`,
    );
    if (problem !== null) {
      say(problem.message);
      return 1;
    }
    say(`no node runs on ${args.dataDir}; starting one in the background (log: ${join(args.dataDir, 'node.log')})`);
    const started = await startBackgroundNode(args.dataDir);
    if ('failed' in started) {
      say(`the node did not start: ${started.failed.message}`);
      // A store held by another process would only be refused again.
      if (!started.failed.held) say(`run \`cairn serve --data-dir ${args.dataDir}\` to see why`);
      return 1;
    }
    url = started.url;
    if (started.anyPort === true) say(anyPortNote(url));
  }
  let last = url;
  // Without --url, a restarted node is found again through node.json (its port may change), and
  // one gone for good (killed, out of memory) is started again, as at start-up.
  const restarts = args.url === undefined;
  const link = new NodeLink({
    url: () => {
      last = args.url ?? findRunningNode(args.dataDir)?.url ?? last;
      return last;
    },
    headers,
    answerMs,
    retryMs: answerMs,
    ...(restarts ? { start: () => startAgain(args.dataDir) } : {}),
  });
  try {
    await link.connect();
  } catch (err) {
    say(cannotConnect(err, url, args.dataDir));
    return 1;
  }
  const refusedIdentity = await identityRefusal(last, headers, answerMs);
  if (refusedIdentity !== null) {
    say(refusedIdentity);
    await link.close();
    return 1;
  }
  const instructions = link.instructions();
  const server = new Server(
    { name: 'cairn', title: 'Cairn memory', version: VERSION },
    { capabilities: { tools: { listChanged: false } }, ...(instructions === undefined ? {} : { instructions }) },
  );
  // Reading stdin from here on, before the transport's own reader, which it adds when it starts
  // (no await in between, so no line is read before it listens).
  const underflows = watchUnderflows(process.stdin);
  server.setRequestHandler(ListToolsRequestSchema, (req) =>
    link.request((c) => c.listTools(req.params), true).catch((err: unknown) => unwrap(err, last, restarts)),
  );
  // A refused or unreachable node answers a tool call as a tool error (DESIGN.md §3), not a
  // transport failure the client shows as raw text.
  onToolCall(server, (call, extra) => {
    const refusal = numberRefusal(call.arguments, underflows.take(extra.requestId));
    if (refusal !== null) return refusal;
    const { args, added } = keyed(call.name, call.arguments);
    const params = { ...call, arguments: args };
    return link
      .request((c) => c.callTool(params), repeatable(params.name, args), added)
      .then((result) => (added === undefined ? result : unreplayed(result)))
      .catch((err: unknown) => asToolError(err, last, restarts) ?? unwrap(err, last, restarts));
  });
  const done = new Promise<void>((resolve) => {
    server.onclose = () => {
      underflows.stop();
      resolve();
    };
  });
  // Lines that are no JSON-RPC message are answered, not dropped (`StdioLines`).
  await server.connect(new StdioLines());
  // The stdio transport does not watch for end of input; the client closing stdin ends us.
  process.stdin.once('end', () => void server.close());
  await done;
  await link.close();
  return 0;
}
