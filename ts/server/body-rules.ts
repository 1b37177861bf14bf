import type { z } from 'zod';

import { ATTRIBUTE_BYTES, Attributes } from '../protocol/fields.js';
import { VERBS } from '../protocol/verbs.js';

// What `body-scan.ts` checks in a body's text before it is parsed, per route: the item limits of
// the route's schema, where the schema says them, so a body past one is refused before any work
// per item (found by an audit: a 1.3M-item `messages` took 3.4 s of the event loop to refuse).

/** Free JSON bounded by its size: no array or object inside may hold more than `max` items. */
export interface FreeRule {
  max: number;
  message: string;
}

/** The checks at one place of a body: by the container found there. */
export interface Rule {
  /** Most items the array here may hold (the schema's `.max`). */
  max?: number;
  /** The rules of an object's fields. */
  fields?: Map<string, Rule>;
  /** A strict object's fields: any other key is unknown. */
  keys?: ReadonlySet<string>;
  /** The rule of each item of an array. */
  items?: Rule;
  /** Free JSON starts here, bounded by its size. */
  free?: FreeRule;
  /** An MCP `tools/call`'s `params`: its `name` string picks the rule of its `arguments`. */
  tool?: true;
  /** An MCP tool's `arguments`: the tool's own body, nested from 0 again. */
  args?: true;
}

/**
 * Free JSON of at most `bytes` serialised: each item of an array or object takes at least 2 bytes
 * (itself and a separator), so one holding more than half that many items cannot fit.
 */
const freeRule = (bytes: number): FreeRule => ({
  max: bytes / 2,
  message: `holds an array or object of more than ${bytes / 2} items, so it is more than ${bytes} bytes serialised; at most ${bytes}`,
});

/**
 * The fields of free JSON each verb bounds by size (the engine's `MAX_VALUE_BYTES` for a note's
 * value, `MAX_ITEM_BYTES` for each handoff item), with the rule each item of a list gets.
 */
const FREE: Record<string, [field: string, rule: Rule][]> = {
  note_write: [['value', { free: freeRule(64 * 1024) }]],
  handoff_create: ['decisions', 'nextSteps', 'artifacts', 'blockers'].map((f) => [
    f,
    { items: { free: freeRule(4096) } },
  ]),
};

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  checks?: { _zod: { def: { check: string; maximum?: number } } }[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The item limits `schema` states, or undefined when it states none. */
export function rulesOf(schema: z.ZodType): Rule | undefined {
  // Attributes are free JSON bounded by their size wherever a schema holds them (an entity with
  // 300k attributes, 7 MB, took 1.1 s of the event loop to refuse after parsing).
  if (schema === Attributes) return { free: freeRule(ATTRIBUTE_BYTES) };
  const def = defOf(schema);
  const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
  if (inner !== undefined) return rulesOf(inner);
  if (def.type === 'object' && def.shape !== undefined) {
    const fields = new Map<string, Rule>();
    for (const [key, field] of Object.entries(def.shape)) {
      const rule = rulesOf(field);
      if (rule !== undefined) fields.set(key, rule);
    }
    const strict = def.catchall !== undefined && defOf(def.catchall).type === 'never';
    if (!strict && fields.size === 0) return undefined;
    return { ...(fields.size === 0 ? {} : { fields }), ...(strict ? { keys: new Set(Object.keys(def.shape)) } : {}) };
  }
  if (def.type === 'array' && def.element !== undefined) {
    const max = def.checks?.find((c) => c._zod.def.check === 'max_length')?._zod.def.maximum;
    const items = rulesOf(def.element);
    if (max === undefined && items === undefined) return undefined;
    return { ...(max === undefined ? {} : { max }), ...(items === undefined ? {} : { items }) };
  }
  return undefined;
}

/** A verb's rules: its schema's, and the size bounds of its free JSON. */
function verbRules(verb: string, schema: z.ZodType): Rule | undefined {
  const rule = rulesOf(schema);
  const free = FREE[verb];
  if (free === undefined) return rule;
  const fields = new Map(rule?.fields);
  for (const [field, bound] of free) fields.set(field, { ...fields.get(field), ...bound });
  return { ...rule, fields };
}

/** The rules of each memory verb route, by URL. */
export const ROUTE_RULES: ReadonlyMap<string, Rule> = new Map(
  VERBS.flatMap((v) => {
    const rule = verbRules(v.verb, v.input);
    return rule === undefined ? [] : [[`/v1/memory/${v.verb}`, rule] as const];
  }),
);

/** The rules of each MCP tool's arguments, by tool name. */
export const TOOL_RULES: ReadonlyMap<string, Rule> = new Map(
  VERBS.flatMap((v) => {
    const rule = verbRules(v.verb, v.input);
    return v.tool === null || rule === undefined ? [] : [[v.tool, rule] as const];
  }),
);

/** A JSON-RPC message on `/v1/mcp`: a `tools/call`'s arguments are checked as its tool's body. */
const MESSAGE: Rule = {
  fields: new Map([['params', { tool: true, fields: new Map([['arguments', { args: true }]]) }]]),
};

/** The body of `/v1/mcp`: one message, or a batch of them. */
export const MCP_RULES: Rule = { fields: MESSAGE.fields as Map<string, Rule>, items: MESSAGE };
