import { z } from 'zod';

import * as knowledge from '../protocol/replies-knowledge.js';
import * as node from '../protocol/replies-node.js';
import * as notes from '../protocol/replies-notes.js';
import { ContextItem, EvidenceItem, PackBudget, PackOmitted } from '../protocol/reply-items.js';
import { Citation, Entity, Fact, Handoff, HistoryEvent, Id, Note, Time } from '../protocol/reply-parts.js';

/**
 * Every reply shape the OpenAPI document names, by its component name: the verbs' and routes'
 * replies and the parts several of them share. The zod schemas in `ts/protocol/replies-*.ts` are
 * the only copy; the document and the tests are generated from them.
 */
export const REPLY_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  Id,
  Time,
  Citation,
  Entity,
  Fact,
  Note,
  HistoryEvent,
  Handoff,
  ContextItem,
  EvidenceItem,
  PackOmitted,
  PackBudget,
  ...knowledge,
  ...notes,
  ...node,
};

/** The component name of `schema`: it must be one of REPLY_SCHEMAS. */
export function replyName(schema: z.ZodType): string {
  const hit = Object.entries(REPLY_SCHEMAS).find(([, s]) => s === schema);
  if (hit === undefined) throw new Error('a reply schema missing from REPLY_SCHEMAS');
  return hit[0];
}

/** `{$ref}` to the component of `schema`. */
export function replyRef(schema: z.ZodType): { $ref: string } {
  return { $ref: `#/components/schemas/${replyName(schema)}` };
}

/**
 * The JSON Schemas (2020-12) of every reply shape, as OpenAPI components that refer to each other
 * by `#/components/schemas/<name>`. Open (the default): objects allow fields these do not name,
 * as DESIGN.md promises clients ("more may be added"). Closed: every object names all its
 * fields, which is how the tests hold the schemas to what the node really sends.
 */
export function replyComponents(opts: { closed?: boolean } = {}): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(REPLY_SCHEMAS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
    override: (ctx) => {
      const s = ctx.jsonSchema as Record<string, unknown>;
      if (opts.closed !== true && s.additionalProperties === false) delete s.additionalProperties;
    },
  });
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // Each is a part of the document, not a schema resource of its own.
    const { $schema: _schema, $id: _id, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}
