// Deterministic generated knowledge for the graph and node benches: entities with pronounceable,
// unique two-word names (no common English words, so name matching is exercised, not defeated),
// a handful of types, and relations of everyday types chosen at random with a fixed seed.

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ONSETS = ['b', 'd', 'f', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'br', 'kr', 'st', 'tr'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'eo'];

function syllables(n, count) {
  let out = '';
  for (let i = 0; i < count; i++) {
    out += ONSETS[n % ONSETS.length] + VOWELS[Math.floor(n / ONSETS.length) % VOWELS.length];
    n = Math.floor(n / (ONSETS.length * VOWELS.length));
  }
  return out;
}

/** The unique name of entity `i`: two capitalised made-up words. */
export function entityName(i) {
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  return `${cap(syllables(i * 7919 + 13, 3))} ${cap(syllables(i, 3))}`;
}

export const TYPES = ['person', 'company', 'project', 'city', 'team'];
export const RELATION_TYPES = ['knows', 'works_with', 'depends_on', 'reviews', 'mentors', 'funds', 'cites'];

/** `entities` entities and `relations` relations (no self loops), deterministic for a seed. */
export function generateGraph(entities, relations, seed = 42) {
  const rand = rng(seed);
  const ents = [];
  for (let i = 0; i < entities; i++) ents.push({ name: entityName(i), type: TYPES[i % TYPES.length] });
  const rels = [];
  for (let i = 0; i < relations; i++) {
    const s = Math.floor(rand() * entities);
    let t = Math.floor(rand() * entities);
    if (t === s) t = (t + 1) % entities;
    rels.push({ source: s, target: t, type: RELATION_TYPES[Math.floor(rand() * RELATION_TYPES.length)] });
  }
  return { ents, rels };
}
