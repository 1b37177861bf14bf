import { z } from 'zod';

/** The JSON Schema (2020-12) of a verb's input, as MCP `inputSchema` and in the OpenAPI document. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return portable(rest) as Record<string, unknown>;
}

/** Keywords whose value maps names to schemas: the names are not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * The schema in the form strict and limited validators accept (an audit of MCP clients): a union
 * `type` (["string","number"]) becomes an `anyOf` of one type each, which Ajv's strict mode
 * refuses without `allowUnionTypes`; `const` becomes a one-value `enum`, which dialects without
 * `const` (OpenAPI 3.0, some model providers) still read; `propertyNames` goes, since some
 * clients reject it, and the node checks every key anyway (the zod schema is the contract; this
 * is only its advertisement). What a value may be is unchanged.
 */
function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'propertyNames') continue;
    out[key] = SCHEMA_MAPS.has(key) && isMap(value) ? mapValues(value, portable) : portable(value);
  }
  if (Array.isArray(out.type)) {
    out.anyOf = out.type.map((type) => ({ type }));
    delete out.type;
  }
  if ('const' in out) {
    out.enum = [out.const];
    delete out.const;
  }
  return out;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapValues(map: Record<string, unknown>, fn: (v: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fn(v)]));
}
