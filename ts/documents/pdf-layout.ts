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

/** The white between two columns, as the lines of their block leave it: from `lo` to `hi`. */
interface Gutter {
  lo: number;
  hi: number;
}

/** A column boundary: `x`, in the gutter of the block of baselines `from` to `to` (indices). */
interface Boundary {
  x: number;
  from: number;
  to: number;
}

/** A column of prose has lines at least this wide (in text-size units, some 15 characters): a
 * table's cells (a label, a figure) are narrower, and a table is read row by row. */
const PROSE_WIDTH = 8;

/**
 * `g` narrowed so that `line` leaves it white: a left column's line may reach into it from the
 * left, a right column's start in it. `null` where a segment runs across it or sits inside it, or
 * less than `min` of it would be left: the line is not part of the block.
 */
function narrowed(g: Gutter, line: Segment[], min: number): Gutter | null {
  let { lo, hi } = g;
  for (const s of line) {
    if (s.x1 <= lo || s.x0 >= hi) continue;
    if (s.x0 < lo && s.x1 < hi) lo = s.x1;
    else if (s.x0 > lo && s.x1 > hi) hi = s.x0;
    else return null;
  }
  return hi - lo >= min ? { lo, hi } : null;
}

/** Whether `line` has text on both sides of `g`. */
const splits = (line: Segment[], g: Gutter) => line.some((s) => s.x1 <= g.lo) && line.some((s) => s.x0 >= g.hi);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * The column boundary through the gap of baseline `k` between `left` and `right`, if the gap is a
 * gutter: a river of white running down a block of lines. The block grows up and down from `k`
 * while lines leave the river white, so a line across it (a title, a full-width abstract above the
 * columns, a footnote below) ends the block without cancelling its columns. The block starts at
 * its first line with text on both sides (the short last line of a paragraph above belongs to
 * that paragraph) and may end with one-sided lines (one column runs longer than the other). It is
 * a boundary when at least two lines have text on both sides and both sides read as prose.
 */
function boundary(segs: Segment[][], k: number, left: Segment, right: Segment): Boundary | null {
  const min = Math.min(left.size, right.size);
  let g: Gutter = { lo: left.x1, hi: right.x0 };
  let from = k;
  let to = k;
  for (let j = k + 1; j < segs.length; j++) {
    const n = narrowed(g, segs[j] ?? [], min);
    if (n === null) break;
    g = n;
    to = j;
  }
  for (let j = k - 1; j >= 0; j--) {
    const n = narrowed(g, segs[j] ?? [], min);
    if (n === null) break;
    g = n;
    from = j;
  }
  const block = segs.slice(from, to + 1);
  const skip = block.findIndex((line) => splits(line, g));
  const lines = block.slice(skip);
  if (lines.filter((line) => splits(line, g)).length < 2) return null;
  const sides = [lines.flat().filter((s) => s.x1 <= g.lo), lines.flat().filter((s) => s.x0 >= g.hi)];
  const prose = sides.every((side) => median(side.map((s) => (s.x1 - s.x0) / s.size)) >= PROSE_WIDTH);
  return prose ? { x: (g.lo + g.hi) / 2, from: from + skip, to } : null;
}

/** The page's column boundaries, each over its own block of baselines. */
function boundaries(segs: Segment[][]): Boundary[] {
  const found: Boundary[] = [];
  for (const [k, line] of segs.entries()) {
    for (let i = 1; i < line.length; i++) {
      const left = line[i - 1];
      const right = line[i];
      if (left === undefined || right === undefined) continue;
      // A gap of a line already in a block, at that block's boundary, is that boundary.
      if (found.some((b) => b.from <= k && k <= b.to && left.x1 <= b.x && b.x <= right.x0)) continue;
      const b = boundary(segs, k, left, right);
      if (b !== null) found.push(b);
    }
  }
  return found;
}

/**
 * The page's lines in reading order: a block of lines in columns is read column by column, left
 * column first, each top to bottom; lines outside such blocks (a title, a full-width abstract, a
 * one-column page) top to bottom, in their place.
 */
export function readingOrder(items: Item[]): Line[] {
  const segs = baselines(items).map(segments);
  const bounds = boundaries(segs);
  const out: Line[] = [];
  let band: { column: number; s: Segment }[] = [];
  let active = '';
  const flushBand = () => {
    const columns = new Map<number, Segment[]>();
    for (const { column, s } of band) columns.set(column, [...(columns.get(column) ?? []), s]);
    for (const c of [...columns.keys()].sort((a, b) => a - b)) {
      (columns.get(c) ?? []).forEach((s, i) => {
        out.push({ y: s.y, size: s.size, text: s.text, fresh: i === 0 && out.length > 0 });
      });
    }
    band = [];
  };
  for (const [k, line] of segs.entries()) {
    // The boundaries of this line's block; a block's lines never run across them.
    const here = bounds.filter((b) => b.from <= k && k <= b.to).map((b) => b.x);
    if (here.join() !== active) {
      flushBand();
      active = here.join();
    }
    for (const s of line) band.push({ column: here.filter((b) => s.x0 >= b).length, s });
  }
  flushBand();
  return out;
}
