import { ApiError } from './errors.js';
import { pathInText } from './json-text.js';

// What in parsed JSON cannot be kept as sent, and the validation error that names it: shared by
// the node's body parser (server/json-body.ts) and `cairn mcp`, which gets a tool call's
// arguments parsed by the MCP SDK and would forward Infinity as null, and `1e-400` as 0.

/** What in a JSON body cannot be kept as sent: where (as zod spells paths) and why. */
export interface BodyProblem {
  path: (string | number)[];
  message: string;
}

export const OVERFLOW =
  'is a number beyond ±1.7976931348623157e308, the largest a JSON number here can hold (it would be kept as null); send it as a string';

export const UNDERFLOW =
  'is a number nearer to 0 than ±4.9e-324, the smallest a JSON number here can hold but 0 (it would be kept as 0); send it as a string';

/** The path of the first place in `value` where `bad(key, child)` holds (iterative: any depth). */
export function findPath(
  value: unknown,
  bad: (key: string, child: unknown) => boolean,
): (string | number)[] | undefined {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, (string | number)[]];
    if (typeof v !== 'object' || v === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(v)
      ? v.map((x, i) => [i, x])
      : Object.keys(v).map((k) => [k, (v as Record<string, unknown>)[k]]);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i] as [string | number, unknown];
      if (bad(String(k), child)) return [...path, k];
      stack.push([child, [...path, k]]);
    }
  }
  return undefined;
}

/** The path of the first number in `value` that JSON.parse made ±Infinity (`1e400`). */
export function nonFinitePath(value: unknown): (string | number)[] | undefined {
  return findPath(value, (_k, child) => typeof child === 'number' && !Number.isFinite(child));
}

/**
 * The path of the first number literal in JSON `text` that JSON.parse makes 0 though it names
 * another number: nearer 0 than the smallest double (`1e-400`, `0.` with 400 zeros and a 1). Its
 * digits before any exponent say whether it names 0 (`0e5`, `-0.0`). Found in the text, since
 * the parsed value holds a plain 0.
 */
export function underflowPath(text: string): (string | number)[] | undefined {
  return pathInText(text, {
    number: (literal) => Number(literal) === 0 && /[1-9]/.test(literal.split(/[eE]/)[0] as string),
  });
}

/** The problem as DESIGN §3's validation error, its field spelled from `path` as zod spells one. */
export function problemError(problem: BodyProblem): ApiError {
  const field = problem.path.length === 0 ? '(body)' : problem.path.map(String).join('.');
  return new ApiError('VALIDATION_ERROR', `${field}: ${problem.message}`, [{ field, message: problem.message }]);
}
