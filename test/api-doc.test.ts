import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { expect, it } from 'vitest';

import { VERBS } from '../ts/protocol/verbs.js';
import { IMPORT_BODY_LIMIT } from '../ts/server/import-route.js';
import { openApiDocument } from '../ts/server/openapi.js';

// docs/api.md against the node it describes, where its tables can be read: each verb's row names
// every field the verb takes, and the import route's limit is the node's.

const API = readFileSync(fileURLToPath(new URL('../docs/api.md', import.meta.url)), 'utf8');
type Doc = {
  paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties?: object } }> } } }>;
};

/** The table row of api.md that starts with `start`, and the text of its code spans. */
function row(start: string): { text: string; code: string[] } {
  const text = API.split('\n').find((line) => line.startsWith(start)) ?? '';
  return { text, code: text.split('`').filter((_, i) => i % 2 === 1) };
}

it.each(VERBS.map((v) => v.verb))('the %s row of api.md names every field the verb takes', (verb) => {
  const doc = openApiDocument('0') as unknown as Doc;
  const schema = doc.paths[`/v1/memory/${verb}`]?.post.requestBody.content['application/json']?.schema;
  const fields = Object.keys(schema?.properties ?? {}).filter((f) => f !== 'user_id' && f !== 'scope');
  const { text, code } = row(`| \`${verb}\``);
  expect(text, `no row for ${verb}`).not.toBe('');
  expect(fields.filter((f) => !code.some((span) => new RegExp(`\\b${f}\\b`).test(span)))).toEqual([]);
});

it("the import route's body limit in api.md is the node's", () => {
  const { text } = row('| `POST /v1/admin/import');
  const said = /≤ (\d+) GiB/.exec(text)?.[1];
  expect(Number(said) * 1024 ** 3).toBe(IMPORT_BODY_LIMIT);
});
