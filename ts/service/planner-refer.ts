// A split part that refers back to a name with a pronoun gets the name (docs/design/query.md,
// "Planner"). Found by an audit: "who owns billing-svc and where is it deployed?" ran "where is it
// deployed" as its second step, which names nothing, so that step was grounded by notes and
// passages about other services.

/** Third-person pronouns standing for a name, and those that stand for its possessive. */
const EN_PRONOUN = /\b(it|its|they|them|their|he|him|his|she|her)\b/iu;
const EN_POSSESSIVE = new Set(['its', 'their', 'his']);
/** Chinese third-person pronouns; 他的 becomes NAME的 by the same replacement. */
const ZH_PRONOUN = /[它他她](?:们)?/u;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/u;

/** The first of `names` `part` holds as whole words (CJK names, written without spaces: anywhere), by position. */
function firstName(part: string, names: string[]): string | undefined {
  let best: { name: string; at: number } | undefined;
  for (const name of names) {
    const edge = CJK.test(name) ? ['', ''] : ['(?<![\\p{L}\\p{N}])', '(?![\\p{L}\\p{N}])'];
    const at = part.search(new RegExp(`${edge[0]}${escapeRegExp(name)}${edge[1]}`, 'iu'));
    if (at >= 0 && (best === undefined || at < best.at)) best = { name, at };
  }
  return best?.name;
}

/** `part` with its first third-person pronoun replaced by `name` (or `name's` for a possessive). */
function substitute(part: string, name: string): string {
  const en = EN_PRONOUN.exec(part);
  if (en !== null) {
    const word = en[0].toLowerCase();
    // "her" is possessive before a word ("what is her role"), else an object ("who hired her").
    const possessive =
      EN_POSSESSIVE.has(word) || (word === 'her' && /^\s+[\p{L}\p{N}]/u.test(part.slice(en.index + 3)));
    return `${part.slice(0, en.index)}${possessive ? `${name}'s` : name}${part.slice(en.index + en[0].length)}`;
  }
  return part.replace(ZH_PRONOUN, name);
}

/**
 * Split parts with back references resolved: a part after the first that holds none of `names`
 * but a third-person pronoun gets, in place of its first pronoun, the first name of the nearest
 * earlier part that holds one. "we", "I" and "you" are the speakers, never a name; a part that
 * names something of its own is left as written.
 */
export function resolveReferences(parts: string[], names: string[]): string[] {
  let last: string | undefined;
  return parts.map((part) => {
    const own = firstName(part, names);
    if (own !== undefined) {
      last = own;
      return part;
    }
    if (last === undefined || !(EN_PRONOUN.test(part) || ZH_PRONOUN.test(part))) return part;
    return substitute(part, last);
  });
}
