// A walk over JSON text (that parsed) which knows where it is: what JSON.parse cannot tell a
// caller afterwards (a key it kept only the last of, a number literal it rounded to 0) is found in
// the text, and named by its path in the parsed value.

/** What a walk looks for: it stops at the first key or number literal a visitor accepts. */
export interface TextVisitor {
  /** A member's key, as decoded, in an object whose earlier keys are `seen`. */
  key?: (key: string, seen: ReadonlySet<string>) => boolean;
  /** A number literal as spelled (`-2.5e-330`). */
  number?: (literal: string) => boolean;
}

/** An open container: an object's keys so far and its current key, or an array's index. */
type Frame = { keys: Set<string>; key: string } | { index: number };

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isNumberStart = (c: number) => c === 0x2d || (c >= 0x30 && c <= 0x39);

/**
 * The path (as zod spells one) of the first key or number literal of `text` that `visit`
 * accepts, or undefined: a key's path ends with the key, a number's is where the value sits.
 * Keys are compared as decoded (`"a"` and `"\u0061"` are one).
 */
export function pathInText(text: string, visit: TextVisitor): (string | number)[] | undefined {
  const frames: Frame[] = [];
  const here = () => frames.map((f) => ('keys' in f ? f.key : f.index));
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const top = frames.at(-1);
    if (c === 0x7b) frames.push({ keys: new Set(), key: '' });
    else if (c === 0x5b) frames.push({ index: 0 });
    else if (c === 0x7d || c === 0x5d) frames.pop();
    else if (c === 0x2c && top !== undefined && 'index' in top) top.index++;
    else if (c === 0x22) {
      const start = i++;
      let escaped = false;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) {
          escaped = true;
          i += 2;
          continue;
        }
        i++;
        if (d === 0x22) break;
      }
      if (top === undefined || !('keys' in top)) continue;
      let j = i;
      while (isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== 0x3a) continue;
      const raw = text.slice(start, i);
      const key = escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      if (visit.key?.(key, top.keys)) return [...here().slice(0, -1), key];
      top.keys.add(key);
      top.key = key;
      continue;
    } else if (isNumberStart(c) && visit.number !== undefined) {
      const start = i++;
      while (i < text.length && (isNumberStart(text.charCodeAt(i)) || /[.eE+]/.test(text[i] as string))) i++;
      if (visit.number(text.slice(start, i))) return here();
      continue;
    }
    i++;
  }
  return undefined;
}
