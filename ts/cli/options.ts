// The options each CLI command takes: run.ts refuses any other, and doctor judges a client's
// `cairn mcp` arguments by the same table.

const STORE = ['--data-dir', '--json'];
const NOTE = [...STORE, '--user', '--scope', '--agent', '--visibility', '--task'];

/**
 * The options each command honours (for a group, each subcommand's); `--help` and `--version` go
 * with every one. Any other option is bad usage, said as such: taken and ignored, `cairn mcp
 * --user alice --scope work` in a client's config served user default, scope default, and `token
 * list --user bob` listed every user's tokens.
 */
export const OPTIONS: Record<string, string[] | Record<string, string[]>> = {
  serve: ['--data-dir', '--host', '--port', '--profile'],
  stop: STORE,
  init: STORE,
  demo: [],
  doctor: STORE,
  openapi: [],
  mcp: ['--data-dir', '--url'],
  check: STORE,
  export: [...STORE, '--user', '--scope', '--allow-empty'],
  import: [...STORE, '--user', '--scope', '--in-pieces'],
  connect: [...STORE, '--force', '--name', '--config', '--url', '--user'],
  token: { create: [...STORE, '--agent', '--user', '--scope', '--role', '--expires'], list: STORE, revoke: STORE },
  memories: {
    list: [...NOTE, '--kind', '--query'],
    show: NOTE,
    history: [...NOTE, '--newest'],
    forget: NOTE,
    audit: [...STORE, '--user', '--scope', '--agent', '--newest'],
  },
  database: { check: STORE, backup: STORE, restore: STORE, compact: [...STORE, '--purge'] },
};

/** What a bridge takes from its environment instead of an option (the client config's `env`). */
export const FROM_ENV: Record<string, Record<string, string>> = {
  mcp: { '--user': 'CAIRN_USER', '--scope': 'CAIRN_SCOPE' },
};

/** The options `command` honours, with `sub` when it is a group; undefined for a command or subcommand it does not know. */
export function optionsOf(command: string, sub: string | undefined): string[] | undefined {
  const takes = OPTIONS[command];
  return Array.isArray(takes) ? takes : takes?.[sub ?? ''];
}

/** The first option given that `command` does not honour (help and version aside), or undefined. */
export function foreignOption(command: string, sub: string | undefined, values: object): string | undefined {
  const takes = optionsOf(command, sub);
  if (takes === undefined) return undefined;
  return Object.keys(values)
    .map((name) => `--${name}`)
    .find((flag) => flag !== '--help' && flag !== '--version' && !takes.includes(flag));
}

/** The options that may be given more than once, each time adding a value. */
const MULTIPLE = ['--scope'];

/** One option as `parseArgs` read it (`tokens: true`). */
type OptionToken = { kind: string; name?: string; value?: string | undefined };

/**
 * The first option that takes one value and was given more than once, with the values given, or
 * undefined. Found by an audit: `--port 1 --port 2` served on port 2, and `--user a --user b`
 * acted for b, the first said and quietly dropped. A flag said twice still means one thing.
 */
export function repeatedOption(tokens: OptionToken[]): { flag: string; values: string[] } | undefined {
  const given = new Map<string, string[]>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined || t.value === undefined) continue;
    const flag = `--${t.name}`;
    if (MULTIPLE.includes(flag)) continue;
    given.set(flag, [...(given.get(flag) ?? []), t.value]);
  }
  const [flag, values] = [...given].find(([, v]) => v.length > 1) ?? [];
  return flag === undefined || values === undefined ? undefined : { flag, values };
}
