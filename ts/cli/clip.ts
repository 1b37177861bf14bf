/**
 * A JSON value as one line of at most `width` characters (code points, so no character is split),
 * ending in `…` when it was cut: a note's value read among others in a terminal, where a large
 * one would otherwise fill screens (found by an audit: 2 KB lines from `memories list`).
 */
export function clip(value: unknown, width: number): { text: string; cut: boolean } {
  const whole = Array.from(JSON.stringify(value) ?? 'null');
  if (whole.length <= width) return { text: whole.join(''), cut: false };
  return { text: `${whole.slice(0, width - 1).join('')}…`, cut: true };
}
