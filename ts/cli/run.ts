import { parseArgs } from 'node:util';

import { EXIT_FAILED, runCheck } from './check.js';
import { resolveDataDir } from './data-dir.js';

const HELP = `cairn — a local-first memory layer for AI agents

Usage:
  cairn check [--data-dir DIR] [--json]   check the store's integrity
  cairn --help                            show this help

Options:
  --data-dir DIR   the store directory (default: $CAIRN_DATA_DIR, else ~/.cairn)
  --json           print the report as one JSON object

Exit codes: 0 clean, 1 problems found, 2 could not check (or bad usage).
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
      help: { type: 'boolean', short: 'h' },
    },
  });
}
