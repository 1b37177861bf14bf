import type { BodyProblem } from '../protocol/body-problem.js';
import { unknownFields } from '../protocol/errors.js';
import { MAX_BODY_DEPTH } from '../protocol/unicode.js';
import { type FreeRule, type Rule, TOOL_RULES } from './body-rules.js';

// One pass over a body's text before JSON.parse sees it: a body past the nesting limit or past an
// item limit of its route (`body-rules.ts`) is refused for the cost of reading it once. Found by
// an audit: JSON.parse, then walks over every item, took seconds of the event loop to refuse
// bodies of a few MiB (4M levels of nesting, 1.3M `messages`, a note value of 2.7M items), and
// every other request on the node waited meanwhile.

const DEEP = `nests deeper than ${MAX_BODY_DEPTH} levels`;

/** An open array or object. */
interface Frame {
  obj: boolean;
  /** Its nesting below the body (below a tool's `arguments` on `/v1/mcp`), the body being 0. */
  level: number;
  rule: Rule | undefined;
  /** The free JSON this is inside, and which frame that starts at. */
  free: { rule: FreeRule; at: number } | undefined;
  /** Its items so far (an object's: its keys). */
  count: number;
  /** Whether the next thing in an array starts an item. */
  expect: boolean;
  /** Where it starts in the text. */
  start: number;
  /** Its name in its parent: an index, or where its key's quoted text starts and ends. */
  name: number | [number, number];
  /** Where an object's current key, quoted as sent, starts and ends (0, 0: none yet). */
  keyAt: [number, number];
  /** A tools/call's `params`: the tool its `name` names. */
  tool?: string;
  /** A strict object's unknown keys: the first few, and how many. */
  unknown: string[];
  unknownCount: number;
}

/**
 * Keys past which a strict object with an unknown one is refused here, naming the first few,
 * rather than after JSON.parse and the schema (no verb's object has a tenth as many fields).
 */
const MANY_KEYS = 1000;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/** A quoted string's text; one with a bad escape (JSON.parse refuses the body later) as it was sent. */
function unquote(quoted: string): string {
  if (!quoted.includes('\\')) return quoted.slice(1, -1);
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}

/**
 * The index just past the string that opens at `i` (or the text's end, unterminated). A plain
 * loop: with `indexOf('"')` in its place, one 2.5 MiB body scanned after a body of 350k keys took
 * 17 s (a V8 slow path, measured here), where this takes 70 ms.
 */
function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x22) return j + 1;
    j += d === 0x5c ? 2 : 1;
  }
  return text.length;
}

/** Whether `c` may continue a number or literal (`true`, `null`). */
const inScalar = (c: number) =>
  c > 0x20 && c !== 0x2c && c !== 0x5d && c !== 0x7d && c !== 0x3a && c !== 0x22 && c !== 0x5b && c !== 0x7b;

/** What the scan found: the first problem, and the text with each refused container replaced by `0`, cheap to parse. */
export interface Scanned {
  problem: BodyProblem;
  text: string;
}

/**
 * The first place in JSON `text` that nests deeper than `MAX_BODY_DEPTH` below the body (below a
 * tool's `arguments` on `/v1/mcp`), or holds more items than `root`'s rules allow there, or null.
 * Text that is not JSON is scanned as far as it goes: JSON.parse refuses it after.
 */
export function scanBody(text: string, root: Rule | undefined): Scanned | null {
  const frames: Frame[] = [];
  let problem: BodyProblem | undefined;
  /** The refused containers, replaced by `0` in the text parsed. */
  const cuts: [number, number][] = [];
  /** Inside a refused container: where it starts and how deep inside it the scan is. */
  let cutFrom = -1;
  let cutDepth = 0;

  const quoted = ([start, end]: [number, number]) => text.slice(start, end);
  const keyOf = (f: Frame) => unquote(quoted(f.keyAt));
  const path = (upTo: number) =>
    frames.slice(1, upTo + 1).map((f) => (typeof f.name === 'number' ? f.name : unquote(quoted(f.name))));
  /** Refuses the container `frames[k]` whole (with `problem`, unless one came first). */
  const cut = (k: number, found: BodyProblem) => {
    problem ??= found;
    const from = (frames[k] as Frame).start;
    while (cuts.length > 0 && (cuts.at(-1) as [number, number])[0] > from) cuts.pop();
    cutFrom = from;
    cutDepth = frames.length - k;
    frames.length = k;
  };
  /** One more item in the top frame: refused past its rule's or its free JSON's limit. */
  const counted = () => {
    const k = frames.length - 1;
    const f = frames[k] as Frame;
    f.count++;
    const max = f.obj ? undefined : f.rule?.max;
    if (max !== undefined && f.count > max) {
      cut(k, { path: path(k), message: `Too big: expected array to have <=${max} items` });
    } else if (f.free !== undefined && f.count > f.free.rule.max) {
      cut(k, { path: path(f.free.at), message: f.free.rule.message });
    }
  };
  /** An array's next item starts here. */
  const item = () => {
    const top = frames.at(-1);
    if (top === undefined || top.obj || !top.expect) return;
    top.expect = false;
    counted();
  };

  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (cutFrom >= 0) {
      if (c === 0x22) {
        i = stringEnd(text, i);
        continue;
      }
      if (c === 0x7b || c === 0x5b) cutDepth++;
      else if ((c === 0x7d || c === 0x5d) && --cutDepth === 0) {
        cuts.push([cutFrom, i + 1]);
        cutFrom = -1;
      }
      i++;
      continue;
    }
    if (c === 0x22) {
      const end = stringEnd(text, i);
      const top = frames.at(-1);
      if (top?.obj === true) {
        let j = end;
        while (isSpace(text.charCodeAt(j))) j++;
        if (text.charCodeAt(j) === 0x3a) {
          top.keyAt = [i, end];
          if (top.rule?.keys !== undefined) {
            const key = keyOf(top);
            if (!top.rule.keys.has(key)) {
              if (top.unknown.length < 5) top.unknown.push(key);
              top.unknownCount++;
            }
          }
          counted();
        } else if (top.rule?.tool === true && keyOf(top) === 'name') {
          top.tool = unquote(text.slice(i, end));
        }
      } else item();
      i = end;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      item();
      if (cutFrom >= 0) continue;
      const parent = frames.at(-1);
      let rule =
        parent === undefined ? root : parent.obj ? parent.rule?.fields?.get(keyOf(parent)) : parent.rule?.items;
      const args = rule?.args === true && c === 0x7b;
      if (args) rule = TOOL_RULES.get(parent?.tool ?? '');
      const level = parent === undefined || args ? 0 : parent.level + 1;
      const name = parent === undefined ? 0 : parent.obj ? parent.keyAt : parent.count - 1;
      const free = rule?.free !== undefined ? { rule: rule.free, at: frames.length } : parent?.free;
      frames.push({
        obj: c === 0x7b,
        level,
        rule,
        free,
        count: 0,
        expect: true,
        start: i,
        name,
        keyAt: [0, 0],
        unknown: [],
        unknownCount: 0,
      });
      if (level >= MAX_BODY_DEPTH) {
        // Named as the schema walk named it: the field under the body (or the arguments) it is in.
        let base = frames.length - 1;
        while (base > 0 && (frames[base] as Frame).level > 0) base--;
        cut(frames.length - 1, { path: path(base + 1), message: DEEP });
      }
      i++;
      continue;
    }
    if (c === 0x7d || c === 0x5d) {
      const closed = frames.at(-1);
      if (closed !== undefined && closed.count > MANY_KEYS && closed.unknownCount > 0) {
        const first = closed.unknown[0] as string;
        const message = unknownFields(closed.unknown, closed.unknownCount);
        problem ??= { path: [...path(frames.length - 1), first], message };
        while (cuts.length > 0 && (cuts.at(-1) as [number, number])[0] > closed.start) cuts.pop();
        cuts.push([closed.start, i + 1]);
      }
      frames.pop();
    } else if (c === 0x2c) {
      const top = frames.at(-1);
      if (top !== undefined && !top.obj) top.expect = true;
    } else if (c > 0x20 && c !== 0x3a) {
      item();
      // The rest of a number or literal starts nothing.
      i++;
      while (i < text.length && inScalar(text.charCodeAt(i))) i++;
      continue;
    }
    i++;
  }
  if (problem === undefined) return null;
  if (cutFrom >= 0) cuts.push([cutFrom, text.length]);
  let kept = '';
  let from = 0;
  for (const [start, end] of cuts) {
    kept += `${text.slice(from, start)}0`;
    from = end;
  }
  return { problem, text: kept + text.slice(from) };
}
