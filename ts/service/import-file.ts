import { totalmem } from 'node:os';

import type { z } from 'zod';

import type { Caller } from '../engine/knowledge.js';
import type { Store } from '../engine/store.js';
import { ApiError } from '../protocol/errors.js';
import type { AdminImportReply } from '../protocol/replies-node.js';
import type { KindCounts } from '../protocol/reply-parts.js';
import { storeFailure } from './engine.js';
import { EXPORT_FILE, firstLine, headProblem } from './export-head.js';
import { gathered, lineCount, linePieces, NEWLINE, oneChunk, type Piece } from './line-pieces.js';

/** Records per `import` call when a file goes through `import` (the verb's per-call limit). */
const PAGE = 5000;

type Counts = z.infer<typeof KindCounts>;

const KINDS = ['entities', 'facts', 'documents', 'notes', 'handoffs'] as const;

function zero(): Counts {
  return { entities: 0, facts: 0, documents: 0, notes: 0, handoffs: 0 };
}

/**
 * What importing a file did (the reply schema's type): `import`'s reply, plus which path took the
 * file: `load` when the scope was empty and the file went in as one bulk transaction,
 * `load_then_import` when its first piece did and the rest went through `import`, `import` when
 * the scope held knowledge and the records were matched against it a page at a time. `skipped`
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

/** The refusal of a body whose first line that is not blank is no record (`export-head.ts`). */
function notAnExportFile(problem: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `the body is not an export file: ${problem}; ${EXPORT_FILE}`, [
    { field: 'body', message: problem },
  ]);
}

/**
 * Whether `bytes` (a piece whose first line is line `first` of the body) holds a line that is not
 * blank; throws when the first such line is no record (`export-head.ts`).
 */
function opensWithRecord(bytes: Buffer, first = 0): boolean {
  const head = firstLine(bytes);
  if (head === null) return false;
  const problem = headProblem(head, first);
  if (problem !== null) throw notAnExportFile(problem);
  return true;
}

/** The refusal of a body of `bytes` bytes holding no line that is not blank. */
function noRecords(bytes: number): ApiError {
  const what = bytes === 0 ? '0 bytes' : `${bytes} bytes of blank lines`;
  return new ApiError('VALIDATION_ERROR', `the body holds no records (${what}): nothing to import; ${EXPORT_FILE}`, [
    { field: 'body', message: 'no records' },
  ]);
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
 * Why `CAIRN_LOAD_PIECE_BYTES` cannot be used, or null (unset, or a whole number of bytes ≥ 1).
 * `cairn serve` and `cairn import` refuse such a value before anything is opened: taken for the
 * default, a mistyped size (`64MB`) let an import hold a sixteenth of memory in one load.
 */
export function loadPieceRefusal(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env.CAIRN_LOAD_PIECE_BYTES;
  if (v === undefined || (/^[1-9]\d{0,14}$/.test(v) && Number.isSafeInteger(Number(v)))) return null;
  return `CAIRN_LOAD_PIECE_BYTES must be a whole number of bytes one bulk load of an import takes, 1 or more, got ${JSON.stringify(v)}`;
}

/**
 * Bytes of export lines one bulk `load` takes at most (see `importLines`): `CAIRN_LOAD_PIECE_BYTES`
 * when `loadPieceRefusal` takes it (serve and import refuse any other value before they start),
 * else a sixteenth of the machine's memory within 64 MiB..1 GiB.
 * A load holds several times its input while it plans (a 182 MB file: 1.4 GB peak RSS), so a
 * sixteenth keeps it well inside the machine, and up to 1 GiB a file goes in whole, as fast as a
 * load goes, where the memory is there.
 */
export function loadPieceBytes(env: NodeJS.ProcessEnv = process.env, memory = totalmem()): number {
  const set = env.CAIRN_LOAD_PIECE_BYTES;
  if (set !== undefined && loadPieceRefusal(env) === null) return Number(set);
  return Math.min(Math.max(Math.floor(memory / 16), 64 << 20), 1 << 30);
}

/**
 * Imports an export file (JSON lines, one record a line) into the scope of `caller`, reading it a
 * piece of whole lines at a time (`loadPieceBytes`), so memory follows the piece, not the file.
 * Into an empty scope the first piece goes in by the engine's bulk `load` (one transaction: all
 * of it or nothing; a load holds several times its input in memory while it plans), and the
 * pieces after it, like every piece into a scope holding knowledge, through `import` a page of
 * 5,000 records at a time, which matches what is stored instead of duplicating it (each page
 * commits alone; running the file again finishes an interrupted one). `skipped` and
 * `not_reproduced` count lines from 0 either way. With `whole` (a Memory Package of that many
 * bytes) see `importWhole`: all of it into an empty scope, or nothing. With `empty` (a Memory
 * Package imported in pieces) a scope holding anything is refused first, and then the package goes
 * in as a file does: its memory follows the piece, where `whole` holds the package several times.
 * Either way a body holding no record, or whose first line that is not blank is no record
 * (`export-head.ts`), is refused before anything is stored.
 */
export async function importLines(
  store: Store,
  caller: Caller,
  input: Uint8Array | AsyncIterable<Uint8Array>,
  opts: { whole?: { bytes: number } | undefined; empty?: boolean } = {},
): Promise<FileImported> {
  const chunks = input instanceof Uint8Array ? oneChunk(input) : input;
  if (opts.whole !== undefined) return importWhole(store, caller, chunks, opts.whole.bytes);
  if (opts.empty === true && !(await isEmpty(store, caller))) throw notEmpty();
  const out: Omit<FileImported, 'mode'> = { imported: zero(), unchanged: zero(), skipped: [], not_reproduced: [] };
  // Pieces holding a record; those before the first hold only blank lines and are passed over.
  let pieces = 0;
  let blank = 0;
  let loaded = false;
  let last: Piece | undefined;
  for await (const piece of linePieces(chunks, loadPieceBytes())) {
    last = piece;
    if (pieces === 0 && !opensWithRecord(piece.bytes, piece.first)) {
      blank += piece.bytes.length;
      continue;
    }
    if (pieces++ === 0) {
      const reply = await engine(() => store.load(caller, piece.bytes));
      // `load` refuses only a scope that holds knowledge; anything else it would have skipped.
      if (reply.error === undefined) {
        add(out, reply as Omit<FileImported, 'mode'>, (index) => piece.first + index);
        loaded = true;
        continue;
      }
    }
    await importPiece(store, caller, piece, out);
  }
  if (pieces === 0) throw noRecords(blank);
  out.skipped.sort((a, b) => a.index - b.index);
  if (last !== undefined) cutShort(out.skipped, last);
  return { mode: loaded ? (pieces > 1 ? 'load_then_import' : 'load') : 'import', ...out };
}

/**
 * Says so on a skipped last line that the body ends inside (no newline after it): a file cut
 * short (copied while it was still written, a full disk) otherwise reads as one bad record, its
 * parse error worded one way by the first run's load and another by a re-run's import.
 */
function cutShort(skipped: FileImported['skipped'], last: Piece): void {
  if (last.bytes.length === 0 || last.bytes[last.bytes.length - 1] === NEWLINE) return;
  const s = skipped.find((x) => x.index === last.first + lineCount(last.bytes));
  if (s !== undefined) s.reason = `${s.reason}; the file ends inside this line (no newline after it): cut short?`;
}

/**
 * Refuses a Memory Package of `bytes` bytes of records larger than one load transaction takes
 * here (`loadPieceBytes`), naming the setting that lets it in.
 */
export function wholeFits(bytes: number): void {
  const limit = loadPieceBytes();
  if (bytes > limit) {
    throw new ApiError(
      'PAYLOAD_TOO_LARGE',
      `the package holds ${bytes} bytes of records, more than one transaction takes here (${limit}): ` +
        `set CAIRN_LOAD_PIECE_BYTES to at least ${bytes} where the import runs (it needs several times that in memory), ` +
        'or import it in pieces (`cairn import DIR --in-pieces`), each committed alone',
    );
  }
}

/**
 * A Memory Package's records (`bytes` of them) into the empty scope of `caller` in one
 * transaction (DESIGN.md §4, "verified first"): a scope holding anything is refused, and so is
 * the package when any record fails its checks (the refusal's details name each line as
 * `line N`, from 1), and then nothing is stored. One transaction holds the package whole, so one
 * larger than a load piece (`loadPieceBytes`) is refused before anything is read, with the
 * setting that lets it in.
 */
async function importWhole(
  store: Store,
  caller: Caller,
  chunks: AsyncIterable<Uint8Array>,
  bytes: number,
): Promise<FileImported> {
  wholeFits(bytes);
  if (!(await isEmpty(store, caller))) throw notEmpty();
  const lines = await gathered(chunks, bytes);
  if (lines === null) throw new ApiError('VALIDATION_ERROR', `the package holds more than ${bytes} bytes`);
  if (!opensWithRecord(lines)) throw noRecords(lines.length);
  const reply = await engine(() => store.load(caller, lines, true));
  const refused = refusalOf(reply);
  if (refused !== null)
    throw refused.details.some((d) => (d as { field?: unknown }).field === 'scope') ? notEmpty() : refused;
  return { mode: 'load', ...(reply as Omit<FileImported, 'mode'>) };
}

/** Adds one reply's counts to `out`, its line indexes mapped by `at`. */
function add(out: Omit<FileImported, 'mode'>, r: Omit<FileImported, 'mode'>, at: (index: number) => number) {
  for (const k of KINDS) {
    out.imported[k] += r.imported[k];
    out.unchanged[k] += r.unchanged[k];
  }
  for (const s of r.skipped) out.skipped.push({ index: at(s.index), reason: s.reason });
  for (const n of r.not_reproduced) {
    out.not_reproduced.push(typeof n.index === 'number' ? { ...n, index: at(n.index) } : n);
  }
}

/** The lines of `piece` through `import`, a page of 5,000 records at a time. */
async function importPiece(store: Store, caller: Caller, piece: Piece, out: Omit<FileImported, 'mode'>) {
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
    add(out, reply as Omit<FileImported, 'mode'>, (index) => at[index] ?? index);
    page = [];
  };
  for (const [i, line] of piece.bytes.toString('utf8').split('\n').entries()) {
    if (line.trim() === '') continue;
    const index = piece.first + i;
    try {
      page.push({ index, record: JSON.parse(line) });
    } catch (err) {
      out.skipped.push({ index, reason: `record: not JSON (${err instanceof Error ? err.message : String(err)})` });
      continue;
    }
    if (page.length === PAGE) await flush();
  }
  await flush();
}
