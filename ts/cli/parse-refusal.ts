// What a command line the option parser refused is said as: in the command's terms, not in
// Node's (`parseArgs` advises "place it at the end of the command after '--'", which no Cairn
// command takes, and quotes the option with a quote left open).

import { nearest } from '../protocol/spelling.js';

/** Why the parser refused: the option as typed, and what was wrong with it. */
export interface ParseRefusal {
  field: string;
  /** For `--json` details: `unknown option`, `needs a value` or `takes no value`. */
  reason: string;
  /** The sentence said after the command's name. */
  message: string;
}

/**
 * `err` from `parseArgs` said for a command that honours `honoured`, or null when it is not one
 * of the parser's refusals. A value that starts with "-" is read by the parser as the next
 * option, so it is said how to give one (`--expires=-5m`).
 */
export function parseRefusal(err: unknown, argv: string[], honoured: string[]): ParseRefusal | null {
  const code = (err as { code?: unknown }).code;
  const text = err instanceof Error ? err.message : '';
  const field = /'(-{1,2}[^' <]+)/.exec(text)?.[1];
  if (field === undefined) return null;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const guess = nearest(field, [...honoured, '--help', '--version']);
    // `-p`: only help and version have a letter; every other option is spelled out.
    const hint =
      guess !== undefined
        ? ` (did you mean ${guess}?)`
        : /^-[^-]/.test(field)
          ? ' (options are spelled out: --name)'
          : '';
    const message = `unknown option ${field}${hint}`;
    return { field, reason: 'unknown option', message };
  }
  if (code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return null;
  if (text.includes('does not take an argument')) {
    return { field, reason: 'takes no value', message: `${field} takes no value` };
  }
  const next = argv[argv.indexOf(field) + 1];
  const dashed =
    next?.startsWith('-') && !honoured.includes(next)
      ? `, got ${JSON.stringify(next)}: a value that starts with "-" is given as ${field}=${next}`
      : '';
  return { field, reason: 'needs a value', message: `${field} needs a value${dashed}` };
}
