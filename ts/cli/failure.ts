import { StoreError } from '../engine/errors.js';
import { ApiError, type ErrorCode, isErrorCode } from '../protocol/errors.js';

/** Exit codes of every command: done, failed (or refused), could not run (or bad usage). */
export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_UNUSABLE = 2;

/**
 * Why a CLI command did not do its work: a DESIGN.md §3 error (what `--json` prints) with the exit
 * code the command ends with (undefined: the command that catches it decides, as `asFailure`).
 * `said` is the line a person reads, which may differ from `message` (a node's refusal is said
 * with its code in front, as the CLI always showed it).
 */
export class CliFailure extends ApiError {
  readonly said: string;

  constructor(
    code: ErrorCode,
    message: string,
    readonly exitCode?: number,
    details: unknown[] = [],
    said?: string,
  ) {
    super(code, message, details);
    this.said = said ?? message;
  }
}

/** Bad usage: a VALIDATION_ERROR naming the option (`--scope`) or argument the user gave, exit 2. */
export function usage(field: string, message: string): CliFailure {
  return new CliFailure('VALIDATION_ERROR', `${field}: ${message}`, EXIT_UNUSABLE, [{ field, message }]);
}

/** Bad input: a VALIDATION_ERROR naming the argument (`DEST`, `DIR`) whose value is refused, exit 1. */
export function refused(message: string, field: string): CliFailure {
  return new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field, message }]);
}

/** Bad usage: the argument `arg` (`DEST`, `KEY`) is not given; `what` says what it is, exit 2. */
export function missing(arg: string, what: string): CliFailure {
  return new CliFailure('VALIDATION_ERROR', `missing ${arg}: ${what}`, EXIT_UNUSABLE, [
    { field: arg, message: 'missing' },
  ]);
}

/**
 * A refusal a node (or the store's own verbs) answered with its §3 body, passed on as it came.
 * One from the node at `url` (the CLI calls it only with `CAIRN_ADMIN_TOKEN`) also says what to
 * do about that setting (`throughNode`): "the token" alone named neither it nor the fix.
 */
export function refusedBy(body: unknown, status = 0, url?: string): CliFailure {
  const e = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code: ErrorCode = isErrorCode(e?.code) ? e.code : status >= 500 ? 'INTERNAL' : 'VALIDATION_ERROR';
  const said = typeof e?.message === 'string' ? e.message : `request failed (${status})`;
  const details = Array.isArray(e?.details) ? e.details : [];
  const message = url === undefined ? said : `${said}${throughNode(status, details, url)}`;
  return new CliFailure(code, message, undefined, details, `${code}: ${message}`);
}

/**
 * What a refusal by the node at `url` adds for the CLI, which sent `CAIRN_ADMIN_TOKEN`: how to get
 * a token that fits (401: a live one; 403 naming `Authorization`: an unlimited admin's), or, on
 * 429, that the token's requests per minute are spent: its admin routes have a count of their own
 * (`rate-limit.ts`), but `export` and `memories list` page through memory verbs, whose count an
 * agent given the same token shares.
 */
function throughNode(status: number, details: unknown[], url: string): string {
  const make = '`cairn token create --agent NAME --role admin`';
  if (status === 401) {
    return `: CAIRN_ADMIN_TOKEN is not a live token of the node at ${url}; set it to one of its admin tokens (lost: stop the node with cairn stop, run ${make} on its data dir, start it again)`;
  }
  if (status === 403 && details.some((d) => (d as { field?: unknown })?.field === 'Authorization')) {
    return `: set CAIRN_ADMIN_TOKEN to an admin token of the node at ${url} with no user or scope limit (${make} makes one)`;
  }
  if (status === 429) {
    return ": CAIRN_ADMIN_TOKEN's requests per minute (the node's CAIRN_RATE_LIMIT) are spent (its admin routes count apart from its memory calls, which an agent using the same token shares); give each agent a token of its own (`cairn token create --agent NAME`), or retry then";
  }
  return '';
}

/**
 * `err` as a CliFailure: itself; the engine's error as UNAVAILABLE (a store another process holds)
 * or INTERNAL, its engine code in `details` and the message; anything else with `exitCode`.
 */
export function asFailure(err: unknown, exitCode: number = EXIT_FAILED): CliFailure {
  if (err instanceof CliFailure) {
    if (err.exitCode !== undefined) return err;
    return new CliFailure(err.code, err.message, exitCode, err.details, err.said);
  }
  if (err instanceof ApiError) return new CliFailure(err.code, err.message, exitCode, err.details);
  if (err instanceof StoreError) {
    const code = err.code === 'STORE_LOCKED' ? 'UNAVAILABLE' : 'INTERNAL';
    return new CliFailure(code, `${err.message} [${err.code}]`, exitCode, [{ store: err.code }]);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CliFailure(exitCode === EXIT_UNUSABLE ? 'VALIDATION_ERROR' : 'INTERNAL', message, exitCode);
}

/**
 * Says `failure` of command `where` and returns its exit code. With `--json` it is the one JSON
 * object the command prints (`{"error":{code,message,details}}` on stdout, as every other outcome
 * is), so a script reads one shape whatever happened; else a line on stderr.
 */
export function report(where: string, json: boolean, failure: CliFailure): number {
  if (json) process.stdout.write(`${JSON.stringify(failure.body())}\n`);
  else process.stderr.write(`cairn ${where}: ${failure.said}\n`);
  return failure.exitCode ?? EXIT_FAILED;
}
