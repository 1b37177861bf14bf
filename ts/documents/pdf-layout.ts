/** A text item of a PDF page: its string, where it starts, how wide and how tall it is. */
export interface Item {
  str: string;
  x: number;
  y: number;
  width: number;
  size: number;
}

/** A line in reading order; `fresh` when it starts a new column or band (never one paragraph with
 * the line before). */
export interface Line {
  y: number;
  size: number;
  text: string;
  fresh: boolean;
}

/** A run of items on one baseline with no wide gap inside: a line of one column. */
interface Segment {
  x0: number;
  x1: number;
  y: number;
  size: number;
  text: string;
}

/** A gap wider than this (in text-size units) between items on a baseline separates columns. */
const COLUMN_GAP = 1.5;
/** A gap wider than this (in text-size units) between two items is a space the PDF did not draw. */
const WORD_GAP = 0.15;

/** Items grouped by baseline (within a third of the text size), top to bottom, left to right. */
function baselines(items: Item[]): Item[][] {
  const sorted = [...items].sort((a, b) => b.y - a.y || a.x - b.x);
  const out: Item[][] = [];
  for (const it of sorted) {
    const last = out[out.length - 1];
    const first = last?.[0];
    if (last !== undefined && first !== undefined && Math.abs(first.y - it.y) <= Math.max(1, it.size / 3))
      last.push(it);
    else out.push([it]);
  }
  for (const l of out) l.sort((a, b) => a.x - b.x);
  return out;
}

/** One baseline cut at its wide gaps; items closer than a word gap join without a space. */
function segments(line: Item[]): Segment[] {
  const out: Segment[] = [];
  for (const it of line) {
    const last = out[out.length - 1];
    const gap = last === undefined ? 0 : it.x - last.x1;
    if (last === undefined || gap > COLUMN_GAP * Math.max(it.size, last.size)) {
      out.push({ x0: it.x, x1: it.x + it.width, y: it.y, size: it.size, text: it.str });
      continue;
    }
    const space = gap > WORD_GAP * it.size && !/\s$/.test(last.text) && !/^\s/.test(it.str);
    last.text += (space ? ' ' : '') + it.str;
    last.x1 = Math.max(last.x1, it.x + it.width);
    last.size = Math.max(last.size, it.size);
  }
  return out;
}

/**
 * Column boundaries: x positions in a gap between segments of one baseline that (almost) no
 * segment of the page crosses — a river of white running down the page.
 */
function boundaries(segs: Segment[][]): number[] {
  const all = segs.flat();
  const found: number[] = [];
  for (const line of segs) {
    for (let i = 1; i < line.length; i++) {
      const prev = line[i - 1];
      const next = line[i];
      if (prev === undefined || next === undefined) continue;
      const x = (prev.x1 + next.x0) / 2;
      if (found.some((f) => Math.abs(f - x) < 2 * next.size)) continue;
      const crossing = all.filter((s) => s.x0 < x && s.x1 > x).length;
      if (crossing <= Math.max(1, all.length * 0.05)) found.push(x);
    }
  }
  return found.sort((a, b) => a - b);
}

/**
 * The page's lines in reading order: where the page has columns, each column top to bottom, left
 * column first; a line that spans the columns (a title across the page) ends the columns above it
 * and is read in its place. Without columns, plain top to bottom.
 */
export function readingOrder(items: Item[]): Line[] {
  const segs = baselines(items).map(segments);
  const bounds = boundaries(segs);
  const column = (s: Segment) => bounds.filter((b) => s.x0 >= b).length;
  const spans = (s: Segment) => bounds.some((b) => s.x0 < b && s.x1 > b);
  const out: Line[] = [];
  let band: Segment[] = [];
  const flushBand = () => {
    const columns = new Map<number, Segment[]>();
    for (const s of band) columns.set(column(s), [...(columns.get(column(s)) ?? []), s]);
    for (const c of [...columns.keys()].sort((a, b) => a - b)) {
      (columns.get(c) ?? []).forEach((s, i) => {
        out.push({ y: s.y, size: s.size, text: s.text, fresh: i === 0 && out.length > 0 });
      });
    }
    band = [];
  };
  for (const line of segs) {
    for (const s of line) {
      if (bounds.length > 0 && spans(s)) {
        flushBand();
        out.push({ y: s.y, size: s.size, text: s.text, fresh: out.length > 0 });
      } else {
        band.push(s);
      }
    }
  }
  flushBand();
  return out;
}
