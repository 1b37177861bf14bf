import { z } from 'zod';

import { ILL_FORMED, LONE_SURROGATE, nfc } from './unicode.js';

// Field types shared by the verb schemas. Each carries the rule DESIGN.md states, so a refusal
// names the field (zod's path) and says what was expected.

const MAX_U64 = 18446744073709551615n;

/** The refusal of an id sent as the JSON number `n`, with its string when that is one. */
const numberId = (n: number) =>
  `an id is a decimal string${Number.isSafeInteger(n) && n >= 0 ? ` ("${n}")` : ''}, not a JSON number`;

/** A 64-bit unsigned id as a decimal string; JSON numbers are refused (they lose precision). */
export const Id = z
  // A model sends back `"id": "11"` as 11: say how to write it (a missing id keeps zod's message).
  .string({ error: (i) => (typeof i.input === 'number' ? numberId(i.input) : undefined) })
  .regex(/^(0|[1-9][0-9]{0,19})$/, 'an id is a decimal string of a 64-bit unsigned integer')
  // zod runs every check, so this one also sees what the pattern refused: BigInt would throw there.
  .refine((s) => !/^[0-9]+$/.test(s) || BigInt(s) <= MAX_U64, 'an id is at most 2^64-1')
  .describe('64-bit unsigned id as a decimal string');

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
// Lone surrogates cannot be stored as UTF-8; control characters in a name break its keys and display.
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);
// Unicode's control characters (category Cc): C0, DEL and C1. A C1 one is as invisible as a C0
// one, and some (U+009B, CSI) drive a terminal that prints the name.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// Whitespace (Unicode White_Space) at either end. HTTP drops the blanks around a header value, so
// `X-Cairn-User: alice ` arrives as "alice": were "alice " a name, the same text would be one user
// in the body and another in the header. Refused everywhere instead, it names no one anywhere.
const EDGE_SPACE = /^\p{White_Space}|\p{White_Space}$/u;

/**
 * What an empty string is told where one is refused: zod's own words were "Too small: expected
 * string to have >=1 characters", beside a "must not be blank" that said the same (an audit).
 */
const EMPTY = 'must not be empty';

/** `user_id` and `scope`: 1–256 bytes of UTF-8 in NFC, no `:` (DESIGN.md §1), no control
 * characters, no whitespace at either end. */
export const Name256 = z
  .string()
  .min(1, EMPTY)
  .refine(wellFormed, ILL_FORMED)
  .refine((s) => !CONTROL.test(s), 'must not contain control characters')
  .refine((s) => !EDGE_SPACE.test(s), 'must not begin or end with whitespace')
  // Counted in NFC, the form the node keys by (`nfc`): "é" sent decomposed is the same 2 bytes as
  // sent composed, and a name whose NFC form is longer than the text sent is refused here, naming
  // the field sent, not by the engine after normalizing.
  .refine((s) => utf8Bytes(nfc(s)) <= 256, 'at most 256 bytes, counted in Unicode NFC (the form the node keeps)')
  .refine((s) => !s.includes(':'), 'must not contain ":"');

// The two descriptions are in every tool's schema (15% of `tools/list` once, found by an audit),
// so they say only what a model acts on; a name breaking the other rules is refused naming them.

/** A scope name (default `default`). */
export const Scope = Name256.describe('Namespace; default "default"; no ":"');

/**
 * The end user whose memory it is. DESIGN.md §1: the user comes from the application (the token,
 * `X-Cairn-User`), as the agent is never guessed by a model. Described as "the end user whose
 * memory this is", a model filled it with a person's name in one call and left it out in the next,
 * and lost its own writes to another user's memory (found by an audit).
 */
export const UserId = Name256.describe(
  'Omit: your token or app sets it. Send only an end user you serve; each is a separate memory',
);

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch of an ISO 8601 date or date-time, or NaN when it is not one. */
export function isoToMs(s: string): number {
  if (!ISO_DATE.test(s) && !ISO_DATETIME.test(s)) return Number.NaN;
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) return ms;
  // Date.parse rolls 2024-02-30 over to March; a real date prints back to the same day.
  const day = s.slice(0, 10);
  const offset = /([+-]\d{2}:\d{2})$/.exec(s)?.[1];
  if (offset === undefined) return new Date(ms).toISOString().slice(0, 10) === day ? ms : Number.NaN;
  const sign = offset.startsWith('-') ? -1 : 1;
  const shift = sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6))) * 60_000;
  return new Date(ms + shift).toISOString().slice(0, 10) === day ? ms : Number.NaN;
}

/** An ISO 8601 date (`2024-05-01`) or date-time with a zone (`2024-05-01T09:30:00Z`). */
export const IsoDate = z
  .string()
  .refine((s) => !Number.isNaN(isoToMs(s)), 'an ISO 8601 date (2024-05-01) or date-time with zone (…T09:30:00Z)')
  .describe('ISO 8601 date or date-time with zone');

/** Not only whitespace; an empty string is refused as empty alone, so this says nothing of it. */
const notBlank = (s: string) => s === '' || s.trim() !== '';

/** Free text with a byte ceiling, counted in UTF-8 as the engine counts it. */
export function text(maxBytes: number, min = 1) {
  return z
    .string()
    .min(min, min === 1 ? EMPTY : `at least ${min} characters`)
    .refine(wellFormed, ILL_FORMED)
    .refine((s) => utf8Bytes(s) <= maxBytes, `at most ${maxBytes} bytes`);
}

/** Text that must say something (a question, a query): like `text`, and not only whitespace. */
export function words(maxBytes: number) {
  return text(maxBytes).refine(notBlank, 'must not be blank: ask with at least one word');
}

/**
 * A name (entity, type, key): like `text`, without control characters, and not only whitespace:
 * a blank name was refused by the engine as "must be 1..=1024 bytes", blaming its length (an audit).
 */
export function name(maxBytes: number) {
  return text(maxBytes)
    .refine((s) => !CONTROL.test(s), 'must not contain control characters')
    .refine(notBlank, 'must not be blank');
}

/** Most attributes one entity or relation may be given in a call. */
export const ATTRIBUTE_KEYS = 256;
/** Most bytes of JSON one entity's or relation's attributes may take in a call, as a note's value. */
export const ATTRIBUTE_BYTES = 65_536;

/**
 * Attributes of an entity or relation: a JSON object of scalar or structured values. Bounded
 * (an audit stored one entity with 300k attributes, 4.7 MiB, which every recall of it would then
 * return whole): a few hundred keys and 64 KiB a call.
 */
export const Attributes = z
  .record(z.string().min(1), z.unknown())
  .refine((a) => Object.keys(a).length <= ATTRIBUTE_KEYS, `at most ${ATTRIBUTE_KEYS} attributes a call`)
  .refine(
    (a) => Buffer.byteLength(JSON.stringify(a)) <= ATTRIBUTE_BYTES,
    `at most ${ATTRIBUTE_BYTES} bytes of JSON a call`,
  )
  .describe('Attributes as a JSON object');

/** The identity fields every verb body may carry; the node strips them before the engine. */
export const identityFields = {
  user_id: UserId.optional(),
  scope: Scope.optional(),
};
