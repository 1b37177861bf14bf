import type { Line } from './pdf-layout.js';

/** A word: letters and digits, with the hyphens that join its parts (`self-contained`). */
const WORD = /[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*/gu;
/** A line that ends in a word broken by a hyphen: the part before it. */
const BROKEN_END = /([\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)*)-$/u;
/** The word a line opens with. */
const OPENING = /^[\p{L}\p{N}]+/u;

/**
 * The words a document's lines hold whole, lower-cased: what a word broken at a line's end is
 * looked up in. The part before a line-end hyphen is no word of its own and is left out.
 */
export function documentWords(pages: { lines: Line[] }[]): Set<string> {
  const words = new Set<string>();
  for (const { lines } of pages) {
    for (const l of lines) {
      for (const w of l.text.replace(BROKEN_END, '').matchAll(WORD)) words.add(w[0].toLowerCase());
    }
  }
  return words;
}

/**
 * `last` (a line ending in a hyphen) and `next` as one text, or null when the hyphen is not a
 * word's. Typesetting breaks words at syllables (`docu-` `mentation`), and compounds at their own
 * hyphen (`self-` `contained`): the document itself tells them apart when it holds the word
 * elsewhere, whole (`documentation`) or hyphenated (`self-contained`). Without that, a part that
 * opens with a capital or a digit keeps the hyphen (`Anglo-Saxon`, `COVID-19`), a lower-case one
 * is a syllable and the word is joined.
 */
export function joinBroken(last: string, next: string, words: Set<string>): string | null {
  const before = BROKEN_END.exec(last)?.[1];
  const after = OPENING.exec(next)?.[0];
  if (before === undefined || after === undefined) return null;
  const head = last.slice(0, -1);
  const stem = before.split('-').pop() ?? before;
  const hyphenated = `${stem}-${after}`.toLowerCase();
  const whole = `${stem}${after}`.toLowerCase();
  if (words.has(hyphenated) && !words.has(whole)) return `${head}-${next}`;
  if (words.has(whole)) return head + next;
  return /^[\p{Lu}\p{N}]/u.test(after) ? `${head}-${next}` : head + next;
}
