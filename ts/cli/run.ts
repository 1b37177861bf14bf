import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VERSION } from '../server/version.js';
import { CLIENTS } from './clients.js';
import { resolveDataDir } from './data-dir.js';
import { asFailure, CliFailure, EXIT_UNUSABLE, report } from './failure.js';
import { FROM_ENV, foreignOption, OPTIONS, optionsOf, repeatedOption } from './options.js';
import { parseRefusal } from './parse-refusal.js';

const HELP = `cairn — a local-first memory layer for AI agents

Usage:
  cairn serve [--host H] [--port P] [--profile lite|team]
                                          run a node (default 127.0.0.1:4000, lite; $CAIRN_HOST,
                                          $CAIRN_PORT, $CAIRN_PROFILE; team is not built yet)
  cairn stop [--json]                     stop the node running on the data dir (SIGTERM: it finishes
                                          what it is running, then lets the store go; waits ≤ 30 s)
  cairn init [--json]                     create the store and print its admin token once
  cairn token create --agent NAME [--user ID] [--scope S]... [--role admin|agent|reader]
                     [--expires 30m|12h|30d|RFC3339] [--json]
  cairn token list [--json]               list tokens (ids, agents, users; never the tokens)
  cairn token revoke ID [--json]          revoke a token
  cairn connect claude|codex|cursor|claude-desktop|trae [--force] [--name N] [--config FILE]
                [--url URL] [--user ID] [--json]
                                          make a token for that agent and write the client's MCP
                                          config (a backup first; --force replaces an entry)
  cairn demo                              two agent processes share memory over MCP, on a
                                          temporary store deleted afterwards
  cairn doctor [--json]                   say what is not ready: runtime, store, node, clients
  cairn memories list [--kind K] [--query Q] [--visibility V] [--task T] [--json]
  cairn memories show|history|forget KEY [--visibility V] [--task T] [--agent NAME] [--json]
                                          the notes of a scope (--user, --scope; --agent for an
                                          agent's own notes, through a node with the admin token)
  cairn memories history KEY [--newest]   a note's events, oldest first; --newest: latest first
  cairn memories audit --agent NAME [--newest] [--json]
                                          that agent's write events in a scope, oldest first
                                          (--newest: latest first) (--user, --scope): who did what
  cairn mcp [--url URL]                   MCP over stdio, forwarded to the node ($CAIRN_TOKEN;
                                          $CAIRN_USER, $CAIRN_SCOPE pick the user and scope); in a
                                          client's config name this CLI by absolute path, not npx:
                                          "command": "${process.execPath}",
                                          "args": ["${fileURLToPath(new URL('./main.js', import.meta.url))}", "mcp"]
  cairn check [--data-dir DIR] [--json]   check the store's integrity (also: cairn database check)
  cairn database check [--json]           check the store's integrity (as cairn check)
  cairn database backup DEST [--json]     an online, consistent copy of the store into DEST
  cairn database restore SRC [--json]     a backup (or a copy of a data dir, its log replayed) into
                                          an empty data dir, checked before it is used
  cairn database compact [--purge] [--json]
                                          rewrite the store compactly; --purge also zeroes the
                                          freed space and the log, erasing forgotten data from disk
  cairn export DIR [--user ID] [--scope S] [--allow-empty] [--json]
                                          a scope as a Memory Package: manifest.json (sha256
                                          digests) and records.jsonl, into an empty DIR; a scope
                                          holding nothing is refused (exit 1, naming the user's
                                          other scopes) unless --allow-empty
  cairn import PATH [--user ID] [--scope S] [--in-pieces] [--json]
                                          a Memory Package, verified first, into an empty scope
                                          (default: the one it came from) in one transaction, or
                                          with --in-pieces a piece at a time (memory follows the
                                          piece, not the package); or an export file (JSON
                                          lines): a bulk load into an empty scope, else matched
                                          record by record
  cairn openapi                           print the HTTP API's OpenAPI document
  cairn --version                         print the version (--json: {"version"})
  cairn --help                            show this help

Options:
  --data-dir DIR   the store directory (default: $CAIRN_DATA_DIR, else ~/.cairn); not demo, openapi
  --json           print one JSON object, a failure too: {"error":{"code","message","details"}};
                   not serve, demo, mcp, openapi

While a node runs, token, export, import, check, backup and compact go through its admin API with
$CAIRN_ADMIN_TOKEN (restore refuses: stop the node first, cairn stop).
Exit codes: 0 done, 1 failed (check: problems found), 2 could not run (or bad usage).
`;

/**
 * How many arguments each command takes after its name (for a group, after each subcommand's
 * name too): one more is bad usage said as such, with the command's own usage, not as an unknown
 * command with every command's help. An unknown subcommand is left to the command to name.
 */
const ARGUMENTS: Record<string, number | Record<string, number>> = {
  serve: 0,
  stop: 0,
  init: 0,
  demo: 0,
  doctor: 0,
  openapi: 0,
  mcp: 0,
  check: 0,
  export: 1,
  import: 1,
  connect: 1,
  token: { create: 1, list: 1, revoke: 2 },
  memories: { list: 1, show: 2, history: 2, forget: 2, audit: 1 },
  database: { check: 1, backup: 2, restore: 2, compact: 1 },
};

/** The first argument past what `command` takes, or undefined. */
function extraArgument(command: string, rest: string[]): string | undefined {
  const takes = ARGUMENTS[command];
  const most = typeof takes === 'number' ? takes : takes?.[rest[0] ?? ''];
  return most === undefined ? undefined : rest[most];
}

/** The commands that take a subcommand or target, named with it when they fail (`cairn token: …`). */
const NAMED_WITH_ARG = ['memories', 'database', 'connect'];

/** The commands that need an argument, each with what must follow it: said when it is missing (`cairn token`). */
const GROUPS = new Map([
  ['export', 'DIR: the directory to write the Memory Package into (cairn export DIR)'],
  ['import', 'PATH: a Memory Package directory or an export file (cairn import PATH)'],
  ['token', 'subcommand; use create, list or revoke'],
  ['database', 'subcommand; use check, backup DEST, restore SRC or compact [--purge]'],
  ['memories', 'subcommand; use list, show KEY, history KEY, forget KEY or audit --agent NAME'],
  ['connect', `client; use one of ${CLIENTS.join(', ')}`],
]);

/**
 * Runs the CLI with `argv` (without node and the script) and returns the exit code. Every failure
 * reaches the one `report` (failure.ts): with `--json` it is a §3 error object on stdout.
 */
export async function run(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    return refusedLine(argv, err);
  }
  const { values, positionals, tokens } = parsed;
  const [command, ...rest] = positionals;
  const json = values.json ?? false;
  if (values.help || command === 'help') {
    // `cairn help token` asks what `cairn token --help` does.
    const about = command === 'help' ? rest[0] : command;
    process.stdout.write(about === undefined ? HELP : helpFor(about));
    return 0;
  }
  if (values.version || (command === 'version' && rest.length === 0)) {
    process.stdout.write(json ? `${JSON.stringify({ version: VERSION })}\n` : `cairn ${VERSION}\n`);
    return 0;
  }
  if (command === undefined) {
    // `cairn --json` alone is bad usage too, said in the one JSON object it asked for.
    if (json) return badUsage(true, 'missing command (see cairn --help)');
    process.stdout.write(HELP);
    return EXIT_UNUSABLE;
  }
  const group = GROUPS.get(command);
  if (group !== undefined && rest.length === 0) {
    return report(command, json, new CliFailure('VALIDATION_ERROR', `missing ${group}`, EXIT_UNUSABLE));
  }
  const where = NAMED_WITH_ARG.includes(command) && rest[0] !== undefined ? `${command} ${rest[0]}` : command;
  const extra = extraArgument(command, rest);
  if (extra !== undefined) {
    const named = typeof ARGUMENTS[command] === 'number' ? command : `${command} ${rest[0]}`;
    const message = `${named}: unexpected argument ${JSON.stringify(extra)}`;
    return badUsage(json, message, helpFor(command), [{ field: extra, message: 'unexpected argument' }]);
  }
  const foreign = foreignOption(command, rest[0], values);
  if (foreign !== undefined) {
    const named = Array.isArray(OPTIONS[command]) ? command : `${command} ${rest[0]}`;
    const variable = FROM_ENV[command]?.[foreign];
    const message = `${named}: ${foreign} is not an option of this command${variable === undefined ? '' : ` (set ${variable} in its environment)`}`;
    // The JSON form only where the command has one: `serve --json` is told in text.
    const asJson = json && (optionsOf(command, rest[0])?.includes('--json') ?? false);
    return badUsage(asJson, message, helpFor(command), [{ field: foreign, message: 'not an option of this command' }]);
  }
  const repeated = repeatedOption(tokens);
  if (repeated !== undefined) {
    const named = Array.isArray(OPTIONS[command]) ? command : `${command} ${rest[0] ?? ''}`.trim();
    const given = repeated.values.map((v) => JSON.stringify(v)).join(', ');
    const message = `${named}: ${repeated.flag} is given ${repeated.values.length} times (${given}); give it once`;
    const asJson = json && (optionsOf(command, rest[0])?.includes('--json') ?? false);
    return badUsage(asJson, message, helpFor(command), [{ field: repeated.flag, message: 'given more than once' }]);
  }
  try {
    const code = await dispatch(command, rest, values);
    if (code !== null) return code;
  } catch (err) {
    return report(where, json, asFailure(err));
  }
  return badUsage(json, `unknown command ${JSON.stringify(positionals.join(' '))}`);
}

/**
 * A command line the parser refused (an option no command has, one missing its value), said as
 * the command's bad usage with its own usage; the command is found by a parse that refuses
 * nothing, and `--json` by hand.
 */
function refusedLine(argv: string[], err: unknown): number {
  const [command = '', sub = ''] = parseArgs({ args: argv, allowPositionals: true, strict: false }).positionals;
  const takes = OPTIONS[command];
  const own = optionsOf(command, sub);
  // A group's subcommand not (yet) given or known: any option of the group's; no command: any at all.
  const every = (t: (typeof OPTIONS)[string]): string[] => (Array.isArray(t) ? t : Object.values(t).flat());
  const honoured = own ?? [...new Set(takes === undefined ? Object.values(OPTIONS).flatMap(every) : every(takes))];
  const named = takes === undefined ? '' : Array.isArray(takes) || own === undefined ? command : `${command} ${sub}`;
  const json = argv.includes('--json') && (takes === undefined || honoured.includes('--json'));
  const said = parseRefusal(err, argv, honoured);
  if (said === null) return badUsage(json, err instanceof Error ? err.message : String(err));
  const message = named === '' ? said.message : `${named}: ${said.message}`;
  return badUsage(json, message, helpFor(command), [{ field: said.field, message: said.reason }]);
}

/**
 * The help of one command (`cairn token --help`): its usage lines from HELP, each with the lines
 * that continue it, and the options every command takes; all of HELP for a command it does not name.
 */
function helpFor(command: string): string {
  const [head = '', rest = ''] = HELP.split('\nUsage:\n');
  const [usage = '', options = ''] = rest.split('\nOptions:\n');
  const entries: string[][] = [];
  for (const line of usage.split('\n')) {
    if (line.startsWith('  cairn ')) entries.push([line]);
    else entries.at(-1)?.push(line);
  }
  const own = entries.filter((e) => e[0]?.split(/\s+/)[2] === command);
  if (own.length === 0) return HELP;
  // Only the options this command honours, each without the note naming the commands that ignore it.
  const [optionLines = '', after = ''] = options.split('\n\n');
  const honoured: string[][] = [];
  for (const line of optionLines.split('\n')) {
    if (line.startsWith('  --')) honoured.push([line]);
    else honoured.at(-1)?.push(line);
  }
  const takes = OPTIONS[command];
  const its = new Set(Array.isArray(takes) ? takes : Object.values(takes ?? {}).flat());
  const kept = honoured
    .filter((o) => its.has(o[0]?.trim().split(/\s+/)[0] ?? ''))
    .map((o) => o.join('\n').replace(/;?\s*not [a-z, ]+$/, ''));
  const optionsPart = kept.length === 0 ? '' : `\nOptions:\n${kept.join('\n')}\n`;
  return `${head}\nUsage:\n${own.map((e) => e.join('\n')).join('\n')}\n${optionsPart}\n${after}`;
}

/** Bad usage: `help` (all of it unless a command's own is given) after the reason, or with `--json` only the error object. */
function badUsage(json: boolean, message: string, help = HELP, details: unknown[] = []): number {
  if (json) return report('', true, new CliFailure('VALIDATION_ERROR', message, EXIT_UNUSABLE, details));
  process.stderr.write(`cairn: ${message}\n\n${help}`);
  return EXIT_UNUSABLE;
}

/**
 * Runs the command `positionals` name; null when they name none. Each command's module is loaded
 * when it runs: `cairn mcp`, started by every desktop client, then loads the MCP SDK and not the
 * node's server, and every command starts faster.
 */
async function dispatch(
  command: string,
  rest: string[],
  values: ReturnType<typeof parse>['values'],
): Promise<number | null> {
  if (command === 'check' && rest.length === 0) {
    const outcome = await (await import('./check.js')).runCheck(
      resolveDataDir(values['data-dir']),
      values.json ?? false,
    );
    process.stdout.write(outcome.stdout);
    return outcome.exitCode;
  }
  // The commands that use no store, before the data dir is resolved (and perhaps refused).
  if (command === 'demo' && rest.length === 0) return (await import('./demo.js')).runDemo();
  if (command === 'openapi' && rest.length === 0) {
    process.stdout.write(
      `${JSON.stringify((await import('../server/openapi.js')).openApiDocument(VERSION), null, 2)}\n`,
    );
    return 0;
  }
  const dataDir = resolveDataDir(values['data-dir']);
  if (command === 'serve' && rest.length === 0) {
    return (await import('./serve.js')).runServe({
      dataDir,
      host: values.host,
      port: values.port,
      profile: values.profile,
    });
  }
  if (command === 'stop' && rest.length === 0)
    return (await import('./stop.js')).runStop(dataDir, values.json ?? false);
  if (command === 'init' && rest.length === 0)
    return (await import('./init.js')).runInit(dataDir, values.json ?? false);
  if (command === 'token' && rest[0] !== undefined && rest.length <= 2) {
    return (await import('./token.js')).runToken(rest[0], {
      dataDir,
      json: values.json ?? false,
      agent: values.agent,
      user: values.user,
      scopes: values.scope,
      role: values.role,
      expires: values.expires,
      id: rest[1],
    });
  }
  if (command === 'import' && rest.length === 1 && rest[0] !== undefined) {
    return (await import('./import.js')).runImport({
      dataDir,
      file: rest[0],
      json: values.json ?? false,
      user: values.user,
      scopes: values.scope,
      inPieces: values['in-pieces'] ?? false,
    });
  }
  if (command === 'connect' && rest.length === 1 && rest[0] !== undefined) {
    return (await import('./connect.js')).runConnect({
      dataDir,
      client: rest[0],
      json: values.json ?? false,
      force: values.force ?? false,
      name: values.name,
      config: values.config,
      url: values.url,
      user: values.user,
    });
  }
  if (command === 'memories' && rest[0] !== undefined && rest.length <= 2) {
    return (await import('./memories.js')).runMemories(rest[0], {
      dataDir,
      json: values.json ?? false,
      key: rest[1],
      user: values.user,
      scopes: values.scope,
      agent: values.agent,
      kind: values.kind,
      visibility: values.visibility,
      task: values.task,
      query: values.query,
      newest: values.newest ?? false,
    });
  }
  if (command === 'doctor' && rest.length === 0)
    return (await import('./doctor.js')).runDoctor(dataDir, values.json ?? false);
  if (command === 'export' && rest.length === 1 && rest[0] !== undefined) {
    return (await import('./export.js')).runExport({
      dataDir,
      dir: rest[0],
      json: values.json ?? false,
      user: values.user,
      scopes: values.scope,
      allowEmpty: values['allow-empty'] ?? false,
    });
  }
  if (command === 'database' && rest[0] !== undefined && rest.length <= 2) {
    return (await import('./database.js')).runDatabase(rest[0], {
      dataDir,
      json: values.json ?? false,
      purge: values.purge ?? false,
      path: rest[1],
    });
  }
  if (command === 'mcp' && rest.length === 0) return (await import('./mcp.js')).runMcp({ dataDir, url: values.url });
  return null;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    tokens: true,
    options: {
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
      purge: { type: 'boolean' },
      'allow-empty': { type: 'boolean' },
      'in-pieces': { type: 'boolean' },
      newest: { type: 'boolean' },
      force: { type: 'boolean' },
      name: { type: 'string' },
      config: { type: 'string' },
      kind: { type: 'string' },
      visibility: { type: 'string' },
      task: { type: 'string' },
      query: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      profile: { type: 'string' },
      url: { type: 'string' },
      agent: { type: 'string' },
      user: { type: 'string' },
      scope: { type: 'string', multiple: true },
      role: { type: 'string' },
      expires: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
    },
  });
}
