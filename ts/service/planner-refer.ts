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

/** Whether `part` holds `name` as a possessor: "Priya Raman's", 张伟的. */
function ownedBy(part: string, name: string): boolean {
  const after = CJK.test(name) ? '\\s*的' : "['’]s\\b";
  return new RegExp(`${escapeRegExp(name)}${after}`, 'iu').test(part);
}

/** Words that open an English clause of its own ("who is the CEO"), not a bare noun phrase. */
const EN_CLAUSE =
  /^(?:what|who|whom|whose|where|when|which|how|why|is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)\b/iu;
/** Chinese question words that open a question of their own (谁是负责人). */
const ZH_CLAUSE = /^(?:谁|什么|哪|何|几|怎么|如何|为什么)/u;

/**
 * Whether `part` is a bare phrase that leans on the subject before it ("address", 住址是什么): no
 * possessor of its own ('s, 的), no clause of its own; in English at most four words, none
 * capitalised (a capital may name something not stored: "Priya's birthday and Tom").
 */
function bare(part: string): boolean {
  if (CJK.test(part)) return !part.includes('的') && !ZH_CLAUSE.test(part);
  const words = part.split(/\s+/u).filter((w) => w !== '');
  return (
    words.length <= 4 &&
    !EN_CLAUSE.test(part) &&
    !/['’]s\b/u.test(part) &&
    !words.some((w) => /^\p{Lu}/u.test(w) && !/^(?:The|A|An)$/u.test(w))
  );
}

/** `part` as the property of `name`: "address" → "Priya Raman's address", 住址 → 张伟的住址. */
function carry(part: string, name: string): string {
  if (CJK.test(part)) return `${name}的${part}`;
  return `${name}'s ${part.replace(/^(?:the|a|an)\s+/iu, '')}`;
}

/**
 * Split parts with back references resolved: a part after the first that holds none of `names`
 * but a third-person pronoun gets, in place of its first pronoun, the first name of the nearest
 * earlier part that holds one. A bare phrase after a part that names a possessor ("Priya Raman's
 * birthday and address", 张伟的生日和住址是什么) gets that possessor: "Priya Raman's address",
 * 张伟的住址是什么. "we", "I" and "you" are the speakers, never a name; a part that names
 * something of its own is left as written.
 */
export function resolveReferences(parts: string[], names: string[]): string[] {
  let last: string | undefined;
  let owner: string | undefined;
  return parts.map((part) => {
    const own = firstName(part, names);
    if (own !== undefined) {
      last = own;
      owner = ownedBy(part, own) ? own : undefined;
      return part;
    }
    if (last !== undefined && (EN_PRONOUN.test(part) || ZH_PRONOUN.test(part))) return substitute(part, last);
    if (owner !== undefined && bare(part)) return carry(part, owner);
    return part;
  });
}
