import type { z } from 'zod';

import type { Caller } from '../engine/knowledge.js';
import type { Store } from '../engine/store.js';
import { ApiError } from '../protocol/errors.js';
import type { AdminImportReply } from '../protocol/replies-node.js';
import type { KindCounts } from '../protocol/reply-parts.js';
import { storeFailure } from './engine.js';

/** Records per `import` call when a file goes through `import` (the verb's per-call limit). */
const PAGE = 5000;

type Counts = z.infer<typeof KindCounts>;

const KINDS = ['entities', 'facts', 'documents', 'notes', 'handoffs'] as const;

function zero(): Counts {
  return { entities: 0, facts: 0, documents: 0, notes: 0, handoffs: 0 };
}

/**
 * What importing a file did (the reply schema's type): `import`'s reply, plus which path took the
 * file: `load` when the scope was empty and the file went in as one bulk transaction, `import`
 * when it held knowledge and the records were matched against it a page at a time. `skipped`
 * indexes are line indexes (from 0; blank lines count).
 */
export type FileImported = z.infer<typeof AdminImportReply>;

function refusalOf(reply: Record<string, unknown>): ApiError | null {
  const err = reply.error as { code?: string; message?: string; details?: unknown[] } | undefined;
  if (err === undefined) return null;
  return new ApiError('VALIDATION_ERROR', err.message ?? 'refused', Array.isArray(err.details) ? err.details : []);
}

async function engine<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw storeFailure(err);
  }
}

function notEmpty(): ApiError {
  return new ApiError(
    'VALIDATION_ERROR',
    'the target scope is not empty: a Memory Package goes only into an empty one',
    [{ field: 'scope', message: 'not empty' }],
  );
}

/** Whether the scope of `caller` holds nothing an export would carry (every agent's, private too). */
async function isEmpty(store: Store, caller: Caller): Promise<boolean> {
  const body = { limit: 1, allAgents: true, allowPrivate: true, includePrivate: true };
  const page = await engine(() => store.knowledge('export', caller, body));
  const refused = refusalOf(page);
  if (refused !== null) throw refused;
  return page.next === null;
}

/**
 * Imports an export file (JSON lines, one record a line) into the scope of `caller`: into an
 * empty scope by the engine's bulk `load` (one transaction: all of it or nothing), else through
 * `import` a page of 5,000 records at a time, which matches what is stored instead of
 * duplicating it (each page commits alone; running the file again finishes an interrupted one).
 * `skipped` and `not_reproduced` count lines from 0 either way. With `emptyOnly` (a Memory
 * Package) a scope holding anything is refused, and nothing is stored.
 */
export async function importLines(
  store: Store,
  caller: Caller,
  lines: Uint8Array,
  opts: { emptyOnly?: boolean } = {},
): Promise<FileImported> {
  if (opts.emptyOnly === true && !(await isEmpty(store, caller))) throw notEmpty();
  const loaded = await engine(() => store.load(caller, lines));
  if (loaded.error === undefined) return { mode: 'load', ...(loaded as Omit<FileImported, 'mode'>) };
  if (opts.emptyOnly === true) throw notEmpty();
  // `load` refuses only a scope that holds knowledge; anything else it would have skipped.
  const out: FileImported = {
    mode: 'import',
    imported: zero(),
    unchanged: zero(),
    skipped: [],
    not_reproduced: [],
  };
  const text = Buffer.from(lines.buffer, lines.byteOffset, lines.byteLength).toString('utf8');
  let page: { index: number; record: unknown }[] = [];
  const flush = async () => {
    if (page.length === 0) return;
    const at = page.map((p) => p.index);
    // An operator's file (the admin route, or the store's owner): every agent's notes go in.
    const reply = await engine(() =>
      store.knowledge('import', caller, { records: page.map((p) => p.record), allAgents: true }),
    );
    const refused = refusalOf(reply);
    if (refused !== null) throw refused;
    const r = reply as Omit<FileImported, 'mode'>;
    for (const k of KINDS) {
      out.imported[k] += r.imported[k];
      out.unchanged[k] += r.unchanged[k];
    }
    for (const s of r.skipped) out.skipped.push({ index: at[s.index] ?? s.index, reason: s.reason });
    for (const n of r.not_reproduced) {
      out.not_reproduced.push(typeof n.index === 'number' ? { ...n, index: at[n.index] ?? n.index } : n);
    }
    page = [];
  };
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      page.push({ index, record: JSON.parse(line) });
    } catch (err) {
      out.skipped.push({ index, reason: `record: not JSON (${err instanceof Error ? err.message : String(err)})` });
      continue;
    }
    if (page.length === PAGE) await flush();
  }
  await flush();
  out.skipped.sort((a, b) => a.index - b.index);
  return out;
}
