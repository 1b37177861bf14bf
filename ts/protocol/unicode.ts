// Lone surrogates: JSON.parse accepts `"\ud800"`, but such a string has no UTF-8 form, so the
// engine could neither store it nor read the body it is in. Found here, a refusal names the field.

/** A high surrogate with no low one after it, or a low one with no high one before it. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The refusal's wording, shared with the schemas' string checks. */
export const ILL_FORMED = 'must be well-formed Unicode (no lone surrogates)';

/** Deepest nesting of a request body: free JSON (a note's value, attributes) may nest 32 levels
 * (the engine's limit), inside the wrappers of the largest body that carries it (an import page). */
export const MAX_BODY_DEPTH = 64;

/** An array or object met by `tooDeepPath`: where it is, its path built only when it is the one. */
interface Place {
  v: object;
  depth: number;
  up: Place | undefined;
  key: string | number;
}

/**
 * The path to the first array or object of `value` nested deeper than `max` levels, or undefined;
 * found without recursion, so a body nested thousands deep cannot exhaust the stack, and with no
 * work for a scalar but its type (an audit: a path copied for each of 2.7M items took 5 s).
 */
export function tooDeepPath(value: unknown, max: number): (string | number)[] | undefined {
  const stack: Place[] = [];
  const visit = (v: unknown, depth: number, up: Place | undefined, key: string | number) => {
    if (v !== null && typeof v === 'object') stack.push({ v, depth, up, key });
  };
  visit(value, 0, undefined, 0);
  while (stack.length > 0) {
    const p = stack.pop() as Place;
    if (p.depth >= max) {
      const path: (string | number)[] = [];
      for (let at: Place | undefined = p; at?.up !== undefined; at = at.up) path.unshift(at.key);
      return path;
    }
    if (Array.isArray(p.v)) for (let i = p.v.length - 1; i >= 0; i--) visit(p.v[i], p.depth + 1, p, i);
    else for (const k of Object.keys(p.v).reverse()) visit((p.v as Record<string, unknown>)[k], p.depth + 1, p, k);
  }
  return undefined;
}

/**
 * The path of the first string in `value` holding a lone surrogate (an object key holding one
 * names the object), or undefined when every string is well-formed. The path is built on the way
 * back from the one found, not copied for every item passed (recursion: bodies are depth-checked first).
 */
export function illFormedPath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? [] : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedPath(value[i]);
      if (found !== undefined) return [i, ...found];
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    if (LONE_SURROGATE.test(k)) return [];
    const found = illFormedPath((value as Record<string, unknown>)[k]);
    if (found !== undefined) return [k, ...found];
  }
  return undefined;
}

/**
 * An identity name (user, scope, agent) in Unicode NFC, so "José" typed as one code point or as
 * "e" plus a combining accent (macOS input, some terminals) names one user, not two that look the
 * same.
 */
export const nfc = (s: string): string => s.normalize('NFC');
