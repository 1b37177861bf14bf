import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ContextReply, QueryReply } from '../ts/protocol/replies-knowledge.js';
import { startTestNode, type TestNode } from './node.js';

// A passage of a markdown page carries the headings it sits under (docs/design/text.md): the
// reader of "The team has three engineers." sees which team, and the heading's words ground the
// question that names it. The citation quotes the passage alone.

let t: TestNode;
const scope = 'headings';
const PAGE =
  '# Platform team\n\nDana Ortiz leads the platform team since March 2023.\n\n' +
  '## People\n\nThe team has three engineers: Ali, Bo and Chen.\n\n' +
  '# Data team\n\n## People\n\nThe team has two engineers.\n';
const ADR =
  '# ADR 7: Storage engine\n\n## Status\n\nAccepted on 2024-03-02.\n\n' +
  '## Decision\n\nWe use Postgres 16 for the event log, with one table per stream.\n';

beforeAll(async () => {
  t = await startTestNode();
  for (const [content, source] of [
    [PAGE, 'wiki'],
    [ADR, 'adr-7'],
  ]) {
    const r = await t.call('POST', '/v1/memory/remember', { body: { scope, content, source } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => t.stop());

type Item = {
  kind: string;
  text: string;
  headings?: string[];
  uncovered?: string[];
  citation: { span: { text: string } | null } | null;
};
type Reply = {
  grounding: { verdict: string; uncovered: string[] };
  items: Item[];
  context?: string;
  budget?: { used: number };
};

async function context(question: string, extra: Record<string, unknown> = {}): Promise<Reply> {
  const r = await t.call('POST', '/v1/memory/context', { body: { scope, question, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  ContextReply.parse(r.body);
  return r.body as Reply;
}

const passage = (r: Reply, words: string) => r.items.find((i) => i.kind === 'passage' && i.text.includes(words));

describe('a passage under markdown headings', () => {
  it('shows its heading path, and is grounded by the heading that names the team', async () => {
    const r = await context('How many engineers does the platform team have?');
    const item = passage(r, 'three engineers');
    expect(item?.headings, JSON.stringify(r)).toEqual(['Platform team']);
    expect(item?.text).toBe('## People\n\nThe team has three engineers: Ali, Bo and Chen.');
    expect(item?.citation?.span?.text).toBe(item?.text);
    expect(item?.uncovered).toEqual([]);
    expect(r.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
    // A passage under no heading has an empty path.
    expect(passage(r, 'Dana Ortiz leads')?.headings).toEqual([]);
  });

  it('is not grounded by the heading of another section', async () => {
    const r = await context('How many engineers does the platform team have?');
    const data = passage(r, 'two engineers');
    // It opens with its own "# Data team", which closes "Platform team": no heading above it.
    expect(data?.headings, JSON.stringify(r)).toEqual([]);
    expect(data?.uncovered).toContain('platform');
    const other = await context('How many engineers does the data team have?');
    expect(other.grounding).toEqual({ verdict: 'grounded', uncovered: [] });
  });

  it('grounds a question whose topic is only in the headings of an ADR', async () => {
    const r = await context('What was the decision on the storage engine?');
    expect(r.grounding, JSON.stringify(r)).toEqual({ verdict: 'grounded', uncovered: [] });
    const decision = passage(r, 'Postgres 16');
    expect(decision?.headings).toEqual(['ADR 7: Storage engine']);
    expect(decision?.citation?.span?.text).not.toContain('Storage engine');
  });

  it('leads its line of a context pack, and the budget counts it', async () => {
    const r = await context('How many engineers does the platform team have?', { tokenBudget: 2000 });
    expect(r.context).toContain('Platform team: ## People\n\nThe team has three engineers');
    expect(r.budget?.used).toBe(Math.ceil(Buffer.byteLength(r.context ?? '', 'utf8') / 4));
    // A budget that fits the passage's line only without its lead leaves the passage out.
    const alone = await context('How many engineers does the platform team have?', { maxItems: 1 });
    const line = alone.context?.split('\n[1] ')[1] ?? '';
    expect(line.startsWith('Platform team: ## People'), alone.context).toBe(true);
    const head = Buffer.byteLength(alone.context?.split('\n[1] ')[0] ?? '', 'utf8');
    const withoutLead = head + Buffer.byteLength(`\n[1] ${line.slice('Platform team: '.length)}`, 'utf8');
    const tight = await context('How many engineers does the platform team have?', {
      maxItems: 1,
      tokenBudget: Math.ceil(withoutLead / 4),
    });
    expect(
      tight.items.some((i) => i.text.includes('three engineers')),
      tight.context,
    ).toBe(false);
  });

  it('carries its heading path as memory_query evidence', async () => {
    const r = await t.call('POST', '/v1/memory/query', {
      body: { scope, query: 'How many engineers does the platform team have?' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    QueryReply.parse(r.body);
    const body = r.body as { evidence: Item[]; context: string };
    const item = body.evidence.find((i) => i.kind === 'passage' && i.text.includes('three engineers'));
    expect(item?.headings).toEqual(['Platform team']);
    expect(body.context).toContain('Platform team: ## People');
  });
});
