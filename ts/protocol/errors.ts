import type { z } from 'zod';

/** The error codes of DESIGN.md §3 and the HTTP status each maps to. */
export const ERROR_STATUS = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  VERSION_CONFLICT: 409,
  IDEMPOTENCY_CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_ERROR: 422,
  DOCUMENT_CORRUPT: 422,
  DOCUMENT_NOT_READABLE: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

/** A code clients can match on. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The body of every error reply, on HTTP and as an MCP tool error. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: unknown[] };
}

/** An error the node answers in the product's terms; anything else becomes `INTERNAL`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** Seconds to wait, sent as `Retry-After` (a RATE_LIMITED that knows when its window ends). */
  retryAfter?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: unknown[] = [],
    /** What failed inside, for the log only (an INTERNAL's reply says nothing of it). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }

  /** The HTTP status of this error. */
  get status(): number {
    return ERROR_STATUS[this.code];
  }

  /** The JSON body: `{"error": {code, message, details}}`. */
  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/** Whether `code` is one of DESIGN.md's codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);
}

/**
 * The issues to report for one zod issue: for a value that matched none of a union's shapes, the
 * issues of the shape it came closest to (fewest issues), at their full path, so `{id: 7}` for
 * `{id} | {from, to, type}` names `fact.id` rather than "fact: Invalid input".
 */
function closest(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const missing = requiredOfEvery(issue.errors);
  if (missing !== undefined) return [{ ...missing, path: issue.path }];
  const best = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
  if (best.length === 0) return [issue];
  return best.flatMap((sub) => closest({ ...sub, path: [...issue.path, ...sub.path] } as z.core.$ZodIssue));
}

/**
 * A field left out where a union of plain types is expected, as one issue naming them all: each
 * shape's issue said only its own (found by a review: `attribute: {key}` was told
 * `attribute.value: required: a string`, though a number or a boolean is taken, and matched by
 * its JSON type: a model sent "8080" for the port stored as 8080). Undefined when some shape
 * failed otherwise.
 */
function requiredOfEvery(shapes: z.core.$ZodIssue[][]): z.core.$ZodIssue | undefined {
  const each = shapes.map((issues) => {
    const [only] = issues;
    const left = issues.length === 1 && only?.code === 'invalid_type' && only.path.length === 0;
    return left && only.message.startsWith('required: ') ? only : undefined;
  });
  if (each.length < 2 || each.some((i) => i === undefined)) return undefined;
  const kinds = [...new Set(each.map((i) => (i as z.core.$ZodIssueInvalidType).expected as string))];
  const said = kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}`;
  const first = each[0] as z.core.$ZodIssue;
  return { ...first, message: `required: ${/^[aeiou]/.test(said ?? '') ? 'an' : 'a'} ${said}` };
}

/**
 * The message of a required field left out, where zod says "Invalid input: expected string,
 * received undefined" (found by playing a model: read as a bad value, not a missing one). A
 * schema's own message for it (note_write's `value`) comes first.
 */
export const requiredField = (issue: z.core.$ZodRawIssue): string | undefined =>
  issue.code === 'invalid_type' && issue.input === undefined
    ? `required: ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`
    : undefined;

/** Unknown fields named in a refusal: at most this many, then how many more (a body of 100k unknown keys was answered with 1.58 MB naming each). */
const NAMED_UNKNOWN = 5;

/**
 * The refusal's message for `count` unknown fields, the first of them `keys`, each with the field
 * `meant` by it where there is one (`from (did you mean source?)`).
 */
export function unknownFields(
  keys: readonly string[],
  count: number,
  meant: (key: string) => string | undefined = () => undefined,
): string {
  const named = keys
    .slice(0, NAMED_UNKNOWN)
    .map((k) => {
      const field = meant(k);
      return field === undefined ? k : `${k} (did you mean ${field}?)`;
    })
    .join(', ');
  return count > NAMED_UNKNOWN
    ? `unknown field(s): ${named} and ${count - NAMED_UNKNOWN} more`
    : `unknown field(s): ${named}`;
}

/**
 * Issues a refusal lists in `details`: the first of them, then one `(more)` entry counting the
 * rest. Found by an audit: 5,000 bad relations in one remember were refused with 25,000 details
 * (2.2 MB); the first few show what is wrong, and the caller fixes its body and sends it again.
 */
export const LISTED_ISSUES = 20;

/** The field of the object at `path` that an unknown `key` there was meant as, if any. */
export type FieldMeant = (path: readonly PropertyKey[], key: string) => string | undefined;

/**
 * A zod failure as VALIDATION_ERROR: the message names the first field, and the issues are in
 * `details` as `{field, message}` (field is the dotted zod path; `(body)` for the whole body), at
 * most `LISTED_ISSUES`, then `{field: "(more)", message: "N more issues …"}`. An unknown field
 * that `meant` finds a field for comes first: a "missing" issue of that field is its echo.
 */
export function validationError(error: z.ZodError, meant: FieldMeant = () => undefined): ApiError {
  const all = error.issues.flatMap(closest);
  const hinted = all.filter(
    (i) => i.code === 'unrecognized_keys' && i.keys.slice(0, NAMED_UNKNOWN).some((k) => meant(i.path, k) !== undefined),
  );
  const first = new Set(hinted);
  const issues = [...hinted, ...all.filter((i) => !first.has(i))];
  const details = issues.slice(0, LISTED_ISSUES).map((i) => {
    // An unknown field is named itself, not the object that holds it.
    const path = i.code === 'unrecognized_keys' ? [...i.path, i.keys[0] ?? ''] : i.path;
    const message =
      i.code === 'unrecognized_keys' ? unknownFields(i.keys, i.keys.length, (k) => meant(i.path, k)) : i.message;
    return { field: path.length === 0 ? '(body)' : path.map(String).join('.'), message };
  });
  const more = issues.length - details.length;
  const named = details[0] ?? { field: '(body)', message: 'invalid' };
  if (more > 0) {
    details.push({ field: '(more)', message: `${more} more issues not listed (${issues.length} in all)` });
  }
  return new ApiError('VALIDATION_ERROR', `${named.field}: ${named.message}`, details);
}
