import type { Line } from './pdf-layout.js';

/** How many lines at a page's top and at its bottom may be a running header or footer. */
const EDGE = 2;

/** A page number: "Page 3", "p. 3 of 9", "Seite 3 von 9", or a line that is only one: "3", "- 3 -",
 * "3 / 9". */
const PAGE_NUMBER =
  /\b(?:page|p\.|pg\.?|seite)\s*\d+(?:\s*(?:of|\/|von)\s*\d+)?|^[\s\-–—]*\d+(?:\s*(?:of|\/)\s*\d+)?[\s\-–—]*$/gi;

/**
 * A line's place and text with its page number left out: "Page 3 of 9" and "Page 4 of 9" at the
 * foot of two pages are one footer. Other numbers stay: a page-per-ticket file's "Ticket 1001" and
 * "Ticket 1002" are its text, not a header (with every number left out, a 10,000-page file of one
 * numbered line a page was read as nothing). Positions within 2 pt are one place.
 */
const key = (l: Line) =>
  `${Math.round(l.y / 2)}|${l.text.toLowerCase().replace(PAGE_NUMBER, '#').replace(/\s+/g, ' ').trim()}`;

/** Whether `l` stands apart from the page's other baselines: more than one and a half times its
 * size from the nearest, as a header stands in the margin above the text, and a column's first
 * line does not. */
const apart = (l: Line, ys: number[]) => ys.every((y) => y === l.y || Math.abs(y - l.y) > 1.5 * l.size);

/**
 * The pages without their running headers and footers: a line among the top or bottom `EDGE` of
 * its page, apart from the rest, whose text (numbers aside) stands at the same height on at least
 * half the pages, and on two at least. A reader skips them; stored, "ACME CONFIDENTIAL" and
 * "Page 7" were a paragraph of every page, in the passages and the citations.
 */
export function withoutRunningLines<P extends { lines: Line[] }>(pages: P[]): P[] {
  const edges = pages.map((p) => {
    const ys = [...new Set(p.lines.map((l) => l.y))].sort((a, b) => b - a);
    const outer = new Set([...ys.slice(0, EDGE), ...ys.slice(-EDGE)]);
    return p.lines.filter((l) => outer.has(l.y) && apart(l, ys));
  });
  const count = new Map<string, number>();
  for (const lines of edges) for (const k of new Set(lines.map(key))) count.set(k, (count.get(k) ?? 0) + 1);
  const running = (k: string) => (count.get(k) ?? 0) >= Math.max(2, pages.length / 2);
  return pages.map((p, i) => {
    const drop = new Set((edges[i] ?? []).filter((l) => running(key(l))));
    return { ...p, lines: p.lines.filter((l) => !drop.has(l)) };
  });
}
