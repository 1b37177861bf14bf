import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VERSION } from '../server/node.js';
import { openApiDocument } from '../server/openapi.js';
import { EXIT_FAILED, runCheck } from './check.js';
import { resolveDataDir } from './data-dir.js';
import { runImport } from './import.js';
import { runInit } from './init.js';
import { runMcp } from './mcp.js';
import { runServe } from './serve.js';
import { runToken } from './token.js';

const HELP = `cairn — a local-first memory layer for AI agents

Usage:
  cairn serve [--host H] [--port P] [--profile lite|team]
                                          run a node (default 127.0.0.1:4000, lite; $CAIRN_HOST,
                                          $CAIRN_PORT, $CAIRN_PROFILE; team is not built yet)
  cairn init [--json]                     create the store and print its admin token once
  cairn token create --agent NAME [--user ID] [--scope S]... [--role admin|agent] [--json]
  cairn token list [--json]               list tokens (ids, agents, users; never the tokens)
  cairn token revoke ID                   revoke a token
  cairn mcp [--url URL]                   MCP over stdio, forwarded to the node ($CAIRN_TOKEN); in a
                                          client's config name this CLI by absolute path, not npx:
                                          "command": "${process.execPath}",
                                          "args": ["${fileURLToPath(new URL('./main.js', import.meta.url))}", "mcp"]
  cairn check [--data-dir DIR] [--json]   check the store's integrity
  cairn import FILE [--user ID] [--scope S] [--json]
                                          an export file (JSON lines) into a scope: a bulk load
                                          when it is empty, else matched record by record
  cairn openapi                           print the HTTP API's OpenAPI document
  cairn --help                            show this help

Options:
  --data-dir DIR   the store directory (default: $CAIRN_DATA_DIR, else ~/.cairn)
  --json           print one JSON object

While a node runs, token and import commands go through its admin API with $CAIRN_ADMIN_TOKEN.
Exit codes: 0 done, 1 failed (check: problems found), 2 could not run (or bad usage).
`;

/** Runs the CLI with `argv` (without node and the script) and returns the exit code. */
export async function run(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`cairn: ${err instanceof Error ? err.message : String(err)}\n\n${HELP}`);
    return EXIT_FAILED;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined && !values.help ? EXIT_FAILED : 0;
  }
  if (command === 'check' && rest.length === 0) {
    const outcome = await runCheck(resolveDataDir(values['data-dir']), values.json ?? false);
    process.stdout.write(outcome.stdout);
    process.stderr.write(outcome.stderr);
    return outcome.exitCode;
  }
  const dataDir = resolveDataDir(values['data-dir']);
  if (command === 'serve' && rest.length === 0) {
    return runServe({ dataDir, host: values.host, port: values.port, profile: values.profile });
  }
  if (command === 'init' && rest.length === 0) return runInit(dataDir, values.json ?? false);
  if (command === 'token' && rest[0] !== undefined && rest.length <= 2) {
    return runToken(rest[0], {
      dataDir,
      json: values.json ?? false,
      agent: values.agent,
      user: values.user,
      scopes: values.scope,
      role: values.role,
      id: rest[1],
    });
  }
  if (command === 'import' && rest.length === 1 && rest[0] !== undefined) {
    return runImport({
      dataDir,
      file: rest[0],
      json: values.json ?? false,
      user: values.user,
      scopes: values.scope,
    });
  }
  if (command === 'mcp' && rest.length === 0) return runMcp({ dataDir, url: values.url });
  if (command === 'openapi' && rest.length === 0) {
    process.stdout.write(`${JSON.stringify(openApiDocument(VERSION), null, 2)}\n`);
    return 0;
  }
  process.stderr.write(`cairn: unknown command ${JSON.stringify(positionals.join(' '))}\n\n${HELP}`);
  return EXIT_FAILED;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
      host: { type: 'string' },
      port: { type: 'string' },
      profile: { type: 'string' },
      url: { type: 'string' },
      agent: { type: 'string' },
      user: { type: 'string' },
      scope: { type: 'string', multiple: true },
      role: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
