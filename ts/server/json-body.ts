import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';

import {
  type BodyProblem,
  findPath,
  nonFinitePath,
  OVERFLOW,
  UNDERFLOW,
  underflowPath,
} from '../protocol/body-problem.js';
import { pathInText } from '../protocol/json-text.js';
import { MCP_RULES, ROUTE_RULES } from './body-rules.js';
import { scanBody } from './body-scan.js';

declare module 'fastify' {
  interface FastifyRequest {
    bodyProblem: BodyProblem | null;
  }
}

const PROTO = 'is not accepted as a key: in JavaScript it names an object’s prototype';
const LOST =
  'is an integer beyond ±9007199254740991, which a JSON number here cannot hold exactly; send it as a string';

/** The integer literals of `text` (outside strings) that JSON.parse rounded, as the numbers it made. */
function roundedIntegers(text: string): Set<number> {
  const rounded = new Set<number>();
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, over escapes.
      i++;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        i += d === 0x5c ? 2 : 1;
        if (d === 0x22) break;
      }
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) {
      i++;
      continue;
    }
    const start = i++;
    while (i < text.length && /[\d.eE+-]/.test(text[i] as string)) i++;
    const literal = text.slice(start, i);
    if (/^-?\d{16,}$/.test(literal)) {
      const n = Number(literal);
      if (!Number.isFinite(n) || BigInt(literal) !== BigInt(n)) rounded.add(n);
    }
  }
  return rounded;
}

const REPEATED =
  'is given more than once in its object: JSON.parse keeps only the last, so the body cannot be kept as sent';

/**
 * The path of the first key that `text` (JSON that parsed) repeats within one object, or
 * undefined. JSON.parse keeps the last of two same-named members silently, so `{"key":"a",
 * "key":"b"}` would be taken as key `b`.
 */
function repeatedKey(text: string): (string | number)[] | undefined {
  return pathInText(text, { key: (key, seen) => seen.has(key) });
}

/**
 * What of a parsed body `value` (read from `text`) cannot be kept as sent: a `__proto__` key, or a
 * `constructor` object holding `prototype` (keys JSON allows that would reshape objects here), and
 * a key repeated within an object (JSON.parse keeps the last), a number too large for a double
 * (JSON.parse makes `1e400` Infinity, which is stored as null: a merge would delete the key) or
 * too near 0 for one (`1e-400` is made 0, its value lost), and
 * integer literals JSON.parse rounded (an id of 20 digits would be stored as another number). The
 * prototype, overflow and integer scans run only when the text could hold such a problem; the
 * repeat scan reads every body once.
 */
export function bodyProblem(text: string, value: unknown): BodyProblem | null {
  if (text.includes('"__proto__"') || text.includes('"constructor"')) {
    const path = findPath(
      value,
      (k, child) =>
        k === '__proto__' ||
        (k === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype')),
    );
    if (path !== undefined) return { path, message: PROTO };
  }
  const repeated = repeatedKey(text);
  if (repeated !== undefined) return { path: repeated, message: REPEATED };
  // Only an exponent or a run of 309 digits can leave the range of a double.
  if (/\d[eE]|\d{309}/.test(text)) {
    const path = nonFinitePath(value);
    if (path !== undefined) return { path, message: OVERFLOW };
  }
  // Only a negative exponent or a run of 323 zeros can come nearer 0 than a double holds.
  if (/[eE]-|0{323}/.test(text)) {
    const path = underflowPath(text);
    if (path !== undefined) return { path, message: UNDERFLOW };
  }
  if (/\d{16}/.test(text)) {
    const rounded = roundedIntegers(text);
    if (rounded.size > 0) {
      const path = findPath(value, (_k, child) => typeof child === 'number' && rounded.has(child));
      if (path !== undefined) return { path, message: LOST };
    }
  }
  return null;
}

/**
 * JSON bodies parsed here rather than by fastify's parser, which refuses a `__proto__` key as
 * "not valid JSON" (naming no field, and over MCP a transport parse error the model never sees)
 * and keeps no text to find rounded integers in. A body that parses is kept with its problem on
 * the request (`bodyProblem`): each route refuses it naming the field, MCP as a tool error. The
 * text is scanned first (`body-scan.ts`), so a body too deep or past an item limit costs one pass.
 */
export function registerJsonBody(app: FastifyInstance) {
  app.decorateRequest('bodyProblem', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req: FastifyRequest, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    // A body past the nesting or an item limit is refused from its text alone: parsed with the
    // refused parts replaced by 0, so MCP can still answer its message's id.
    const url = req.routeOptions.url;
    const scanned = scanBody(text, url === '/v1/mcp' ? MCP_RULES : ROUTE_RULES.get(url ?? ''));
    let value: unknown;
    try {
      value = JSON.parse(scanned?.text ?? text);
    } catch (err) {
      done(err as SyntaxError, undefined);
      return;
    }
    req.bodyProblem = scanned?.problem ?? bodyProblem(text, value);
    done(null, value);
  });
}
