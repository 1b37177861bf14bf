import type { z } from 'zod';

import { jsonSchemaOf } from './json-schema.js';
import { nearest } from './spelling.js';

// A model sends a field in the spelling of the verb next door: the verbs spell fields two ways
// (`as_of`, `user_id`, `content_base64` beside `taskId`, `expectedVersion`) and name one thing two
// ways. A refusal of an unknown field names the field of that object it stands for, so the model
// fixes its call in one step instead of guessing.

/**
 * One thing named two ways: relate's `from`/`to` are a remembered relation's `source`/`target`;
 * context asks a `question`, query a `query`; a fact in a reply has a `relation`, one sent a `type`.
 */
const OTHER_NAME: Record<string, string> = {
  from: 'source',
  to: 'target',
  source: 'from',
  target: 'to',
  question: 'query',
  query: 'question',
  relation: 'type',
};

/** Fields sent beside `attributes` that belong in it (a fact's valid time, as replies show it beside its ends). */
const IN_ATTRIBUTES = ['valid_from', 'valid_to'];

/** A field name without case or separators: `expected_version`, `expectedVersion` and `ExpectedVersion` are one. */
const bare = (name: string) => name.toLowerCase().replace(/[-_\s]/g, '');

/**
 * The lengths of an unknown field that may be a typo of a field (two edits apart, `nearest`):
 * shorter, two edits make `to` of `k`; longer, no field is that long and the comparison would cost.
 */
const TYPO_LENGTHS = { min: 5, max: 64 };

/** The field of `fields` that `key` is a typo of (`expectedVerison`, `idempotencyKye`), if any. */
function typoOf(fields: readonly string[], key: string): string | undefined {
  if (key.length < TYPO_LENGTHS.min || key.length > TYPO_LENGTHS.max) return undefined;
  const near = nearest(bare(key), fields.map(bare));
  return fields.find((f) => bare(f) === near);
}

const schemas = new WeakMap<z.ZodType, unknown>();

/** The objects of a JSON Schema that a value at `path` below it may be (every branch of a union). */
function objectsAt(node: unknown, path: readonly PropertyKey[]): Record<string, unknown>[] {
  if (node === null || typeof node !== 'object') return [];
  const n = node as Record<string, unknown>;
  const branches = [n.anyOf, n.oneOf, n.allOf].filter(Array.isArray).flat();
  if (branches.length > 0) return branches.flatMap((b) => objectsAt(b, path));
  const [head, ...rest] = path;
  if (head === undefined) return [n];
  if (typeof head === 'number') return objectsAt(n.items, rest);
  const props = n.properties as Record<string, unknown> | undefined;
  return props === undefined ? [] : objectsAt(props[String(head)], rest);
}

/**
 * The field of `schema`'s object at `path` that the unknown field `key` was meant as: the one
 * spelled alike but for case and separators, else the other name of the same thing, else
 * `attributes.valid_from` for a `valid_from` sent beside `attributes`, else the field it is a
 * typo of; undefined when none is.
 */
export function fieldMeant(schema: z.ZodType, path: readonly PropertyKey[], key: string): string | undefined {
  let json = schemas.get(schema);
  if (json === undefined) {
    json = jsonSchemaOf(schema);
    schemas.set(schema, json);
  }
  const fields = objectsAt(json, path).flatMap((o) => Object.keys((o.properties as object | undefined) ?? {}));
  const inAttributes = IN_ATTRIBUTES.find((a) => bare(a) === bare(key) && fields.includes('attributes'));
  return (
    fields.find((f) => bare(f) === bare(key)) ??
    fields.find((f) => f === OTHER_NAME[key]) ??
    (inAttributes === undefined ? undefined : `attributes.${inAttributes}`) ??
    typoOf(fields, key)
  );
}
