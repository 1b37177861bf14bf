import { readFile } from 'node:fs/promises';
import { runInNewContext } from 'node:vm';

import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ERROR_STATUS } from '../ts/protocol/errors.js';
import { VERBS } from '../ts/protocol/verbs.js';
import { DOCS_HTML } from '../ts/server/docs-page.js';
import { startTestNode, type TestNode } from './node.js';

// The OpenAPI document a node serves: the one committed in docs/, valid OpenAPI 3.1, listing
// every route it serves with the errors each can answer.

type Operation = { responses: Record<string, { description?: string; content?: Record<string, unknown> }> };
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

let t: TestNode;
let doc: Doc;

beforeAll(async () => {
  t = await startTestNode();
  doc = (await t.call('GET', '/v1/openapi.json', { token: null })).body as unknown as Doc;
});
afterAll(() => t.stop());

/** The responses of `method path`, failing when the document does not list the operation. */
function responses(method: string, path: string): Operation['responses'] {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${method} ${path} is not in the document`);
  return op.responses;
}

describe('the OpenAPI document', () => {
  it('is the committed docs/openapi.json (run `npm run openapi` after changing the API)', async () => {
    const committed = JSON.parse(await readFile(new URL('../docs/openapi.json', import.meta.url), 'utf8'));
    expect(doc).toEqual(committed);
  });

  it('validates as OpenAPI 3.1', async () => {
    const result = await new Validator().validate(structuredClone(doc) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is checked by a validator that refuses a response without a description', async () => {
    const broken = structuredClone(doc);
    const whoami = responses('GET', '/v1/whoami');
    broken.paths['/v1/whoami'] = { get: { responses: { ...whoami, '200': { content: whoami['200']?.content } } } };
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('gives every JSON 200 a named reply schema (the document itself excepted)', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const ok = op.responses['200'];
        if (ok === undefined) {
          expect(`${method} ${path}`, 'only GET /v1/mcp never answers 200').toBe('get /v1/mcp');
          continue;
        }
        const json = ok.content?.['application/json'] as { schema?: { $ref?: string } } | undefined;
        if (json === undefined || path === '/v1/openapi.json') continue;
        expect(json.schema?.$ref, `${method} ${path}`).toMatch(/^#\/components\/schemas\/\w+Reply$/);
      }
    }
  });

  it('lists every memory verb, the docs page and the document itself', () => {
    for (const spec of VERBS) expect(responses('POST', `/v1/memory/${spec.verb}`)['200']).toBeDefined();
    expect(responses('GET', '/v1/memory/status')['200']).toBeDefined();
    expect(responses('GET', '/docs')['200']?.content).toHaveProperty('text/html');
    expect(responses('GET', '/v1/openapi.json')['200']).toBeDefined();
  });

  it('lists only routes the node serves', async () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const r = await t.call(method.toUpperCase(), path.replace('{id}', '000000000000'), { token: null });
        expect(r.body.error?.message ?? '', `${method} ${path}`).not.toMatch(/^no route/);
      }
    }
  });

  it.each([
    ['POST', '/v1/memory/note_write', ['409']],
    ['POST', '/v1/memory/forget', ['404']],
    ['POST', '/v1/memory/delete_user', ['404']],
    ['DELETE', '/v1/admin/tokens/{id}', ['404']],
    ['POST', '/v1/admin/import', ['415']],
    ['POST', '/v1/memory/recall', ['415', '503']],
    ['GET', '/v1/mcp', ['405']],
  ])('%s %s documents %j', (method, path, statuses) => {
    for (const s of statuses) expect(Object.keys(responses(method, path))).toContain(s);
  });

  it.each([
    ['POST', '/v1/memory/recall', ['404', '409']],
    ['POST', '/v1/memory/note_list', ['404', '409']],
    ['GET', '/v1/admin/tokens', ['413', '415', '422']],
    ['GET', '/health', ['401', '429']],
  ])('%s %s does not claim %j', (method, path, statuses) => {
    for (const s of statuses) expect(Object.keys(responses(method, path))).not.toContain(s);
  });

  it('names the codes of every error status it documents', () => {
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          const codes = Object.entries(ERROR_STATUS).filter(([, s]) => String(s) === status);
          if (codes.length === 0 || (path === '/v1/mcp' && ['400', '404', '406'].includes(status))) continue;
          expect(
            codes.some(([code]) => r.description?.includes(code)),
            `${method} ${path} ${status}: ${r.description}`,
          ).toBe(true);
        }
      }
    }
  });
});

/** A DOM element as far as the docs page's script uses one. */
class FakeElement {
  textContent = '';
  className = '';
  readonly children: FakeElement[] = [];
  append(...children: FakeElement[]) {
    this.children.push(...children);
  }
  text(): string {
    return [this.textContent, ...this.children.map((c) => c.text())].join('\n');
  }
}

describe('the docs page', () => {
  it('renders every operation with its request body, its reply schema and its other statuses', async () => {
    const script = /<script>([\s\S]*)<\/script>/.exec(DOCS_HTML)?.[1] ?? '';
    const root = new FakeElement();
    const document = { createElement: () => new FakeElement(), getElementById: () => root };
    const fetch = async () => ({ json: async () => structuredClone(doc) });
    runInNewContext(script, { document, fetch });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The script clears the root before rendering, and writes into it only when it fails.
    expect(root.textContent).toBe('');
    const text = root.text();
    for (const path of Object.keys(doc.paths)) expect(text).toContain(path);
    expect(text).toContain('export records, one a line'); // the JSON-lines body of /v1/admin/import
    expect(text).toContain('"RecallReply"');
    expect(text).toContain('409 — VERSION_CONFLICT');
  });
});
