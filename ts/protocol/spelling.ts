// The nearest of a few names a user may have meant, for "did you mean" in the CLI's option
// refusals and the node's unknown routes.

/** The edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
function distance(a: string, b: string): number {
  const w = b.length + 1;
  const d = new Array<number>((a.length + 1) * w).fill(0);
  const at = (i: number, j: number) => d[i * w + j] ?? 0;
  for (let i = 0; i <= a.length; i++) d[i * w] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      d[i * w + j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The name of `known` within two edits of `typed` (the nearest), or undefined. */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  const scored = known.map((o) => ({ o, d: distance(typed, o) })).filter((s) => s.d <= 2);
  return scored.sort((x, y) => x.d - y.d)[0]?.o;
}
