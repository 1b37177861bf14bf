import { z } from 'zod';

/** The JSON Schema (2020-12) of a verb's input, as MCP `inputSchema` and in the OpenAPI document. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}
