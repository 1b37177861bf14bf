// Lone surrogates: JSON.parse accepts `"\ud800"`, but such a string has no UTF-8 form, so the
// engine could neither store it nor read the body it is in. Found here, a refusal names the field.

/** A high surrogate with no low one after it, or a low one with no high one before it. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The refusal's wording, shared with the schemas' string checks. */
export const ILL_FORMED = 'must be well-formed Unicode (no lone surrogates)';

/** Deepest nesting of a request body: free JSON (a note's value, attributes) may nest 32 levels
 * (the engine's limit), inside the wrappers of the largest body that carries it (an import page). */
export const MAX_BODY_DEPTH = 64;

/**
 * The path to the first array or object of `value` nested deeper than `max` levels, or undefined;
 * found without recursion, so a body nested thousands deep cannot exhaust the stack.
 */
export function tooDeepPath(value: unknown, max: number): (string | number)[] | undefined {
  const stack: [unknown, (string | number)[]][] = [[value, []]];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, (string | number)[]];
    if (v === null || typeof v !== 'object') continue;
    if (path.length >= max) return path;
    const entries: [string | number, unknown][] = Array.isArray(v) ? [...v.entries()] : Object.entries(v);
    for (const [k, item] of entries) stack.push([item, [...path, k]]);
  }
  return undefined;
}

/**
 * The path of the first string in `value` holding a lone surrogate (an object key holding one
 * names the object), or undefined when every string is well-formed.
 */
export function illFormedPath(value: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = illFormedPath(item, [...path, i]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, item] of Object.entries(value)) {
    if (LONE_SURROGATE.test(k)) return path;
    const found = illFormedPath(item, [...path, k]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * An identity name (user, scope, agent) in Unicode NFC, so "José" typed as one code point or as
 * "e" plus a combining accent (macOS input, some terminals) names one user, not two that look the
 * same.
 */
export const nfc = (s: string): string => s.normalize('NFC');
