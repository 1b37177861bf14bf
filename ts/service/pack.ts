/** The token estimator of context packs: ceil(UTF-8 bytes / 4). */
export const ESTIMATOR = 'utf8_bytes_v1';

/** Estimated tokens of `s` under `utf8_bytes_v1`. */
export function estimateTokens(s: string): number {
  return Math.ceil(Buffer.byteLength(s, 'utf8') / 4);
}

/** What a caller asked the pack to respect. */
export interface PackOptions {
  tokenBudget?: number | undefined;
  maxItems?: number | undefined;
  purpose?: 'general' | 'coding' | 'research' | 'browser' | undefined;
}

const HEADINGS: Record<NonNullable<PackOptions['purpose']>, string> = {
  general: 'Memory relevant to the question (cite the [n] markers):',
  coding: 'Project memory for this coding task (cite the [n] markers):',
  research: 'Sources from memory for this research question (cite the [n] markers):',
  browser: 'Memory relevant to this page (cite the [n] markers):',
};

type Item = Record<string, unknown>;

function line(n: number, item: Item): string {
  const text = typeof item.text === 'string' ? item.text : JSON.stringify(item.text ?? '');
  const citation = item.citation as { source?: { name?: unknown } } | undefined;
  const from = typeof citation?.source?.name === 'string' ? ` — ${citation.source.name}` : '';
  const date = typeof item.source_date === 'string' ? ` (${item.source_date})` : '';
  return `[${n}] ${text}${from}${date}`;
}

/**
 * A context pack from ranked items: items in rank order while they fit the token budget and the
 * item cap; an item that does not fit is omitted whole (never cut) and later, smaller items may
 * still fit. Returns the text, the items kept, the omitted ones with the reason, and the budget.
 */
export function buildPack(items: Item[], opts: PackOptions) {
  const heading = HEADINGS[opts.purpose ?? 'general'];
  let used = estimateTokens(heading);
  const kept: Item[] = [];
  const lines = [heading];
  const omitted: { rank: number; reason: 'token_budget' | 'max_items' }[] = [];
  items.forEach((item, i) => {
    if (opts.maxItems !== undefined && kept.length >= opts.maxItems) {
      omitted.push({ rank: i + 1, reason: 'max_items' });
      return;
    }
    const l = line(kept.length + 1, item);
    const cost = estimateTokens(`\n${l}`);
    if (opts.tokenBudget !== undefined && used + cost > opts.tokenBudget) {
      omitted.push({ rank: i + 1, reason: 'token_budget' });
      return;
    }
    used += cost;
    kept.push(item);
    lines.push(l);
  });
  return {
    context: lines.join('\n'),
    items: kept,
    omitted,
    budget: { estimator: ESTIMATOR, limit: opts.tokenBudget ?? null, used, purpose: opts.purpose ?? 'general' },
  };
}
