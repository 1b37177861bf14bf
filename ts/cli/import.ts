import { createReadStream, existsSync, openSync, readSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';

import { DATA_FILE } from '../engine/store-files.js';
import { ApiError } from '../protocol/errors.js';
import { findRunningNode, type NodeFile } from '../server/node-file.js';
import { EXPORT_FILE, firstLine, headProblem } from '../service/export-head.js';
import { type FileImported, importLines, loadPieceRefusal, wholeFits } from '../service/import-file.js';
import { counted } from './counted.js';
import { CliFailure, EXIT_FAILED, EXIT_UNUSABLE, refusedBy, usage } from './failure.js';
import { nodeWaitMs, silentNode, watchNode } from './node-wait.js';
import {
  MANIFEST,
  PackageError,
  packageBytes,
  packageLine,
  packagePlace,
  packageSize,
  RECORDS,
  type Verified,
  verifyPackage,
} from './package.js';
import { openStore } from './store-owner.js';
import { nameProblem, userScope } from './user-scope.js';

/** Arguments of `cairn import FILE`. */
export interface ImportArgs {
  dataDir: string;
  file: string;
  json: boolean;
  user?: string | undefined;
  scopes?: string[] | undefined;
  /** A package goes in a piece at a time, each committed alone, instead of in one transaction. */
  inPieces?: boolean;
}

/** The agent recorded on what `cairn import` stores when it opens the store itself. */
export const CLI_AGENT = 'cli';

/**
 * Streams the file (`size` bytes) to a running node's admin import route, which reads it a piece
 * at a time as it arrives; the length goes first, so a body over the node's limit is refused
 * before anything is stored. A node that stops answering is given up on as `adminCall` does.
 */
function throughNode(
  node: NodeFile,
  token: string,
  query: Record<string, string>,
  body: AsyncIterable<Uint8Array>,
  size: number,
): Promise<FileImported> {
  const waitMs = nodeWaitMs();
  return new Promise((resolve, reject) => {
    const req = request(
      `${node.url}/v1/admin/import?${new URLSearchParams(query)}`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/x-ndjson',
          'content-length': String(size),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('error', fail);
        res.on('end', () => {
          stopWatching();
          try {
            const json = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
            const status = res.statusCode ?? 0;
            if (status < 200 || status > 299) reject(refusedBy(json, status, node.url));
            else resolve(json as unknown as FileImported);
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    const stopWatching = watchNode(node.url, waitMs, () => req.destroy(silentNode(node.url, waitMs, node.pid)));
    function fail(err: Error) {
      stopWatching();
      reject(
        err instanceof CliFailure
          ? err
          : new CliFailure('UNAVAILABLE', `the node at ${node.url} does not answer (${err.message})`),
      );
    }
    req.on('error', fail);
    Readable.from(body)
      .on('error', (err) => {
        stopWatching();
        reject(err);
      })
      .pipe(req);
  });
}

/** Where a record is in a package, when the import read one: its file and line there (from 1). */
type Place = { file?: string; line?: number };
/** A skipped line, with its place in the package. */
type Skipped = FileImported['skipped'][number] & Place;
/** A record not reproduced, with its place in the package. */
type NotReproduced = FileImported['not_reproduced'][number] & Place;
type Shown = Omit<FileImported, 'skipped' | 'not_reproduced'> & { skipped: Skipped[]; not_reproduced: NotReproduced[] };

/**
 * `r` with each skipped or not reproduced record of a package named by its file and line there
 * (`file`, `line` from 1) beside `index`, which counts the lines of its files read one after
 * another (found by reviews: `--in-pieces` said `line N` of that count, naming no file, and a
 * record not reproduced had its index only).
 */
function placed(r: FileImported, v: Verified): Shown {
  const at = (index: unknown) => (typeof index === 'number' ? packagePlace(v, index) : null);
  return {
    ...r,
    skipped: r.skipped.map((s) => ({ ...s, ...at(s.index) })),
    not_reproduced: r.not_reproduced.map((n) => ({ ...n, ...at(n.index) })),
  };
}

/** Where a record was read, as a reader reads it: `records.jsonl line 7`, or `line 7` of an export file. */
function where(p: Place & { index?: unknown }): string {
  const line = p.line ?? (typeof p.index === 'number' ? p.index + 1 : undefined);
  return `${p.file === undefined ? '' : `${p.file} `}line ${line ?? '?'}`;
}

function summary(r: Shown): string {
  const n = (c: FileImported['imported']) =>
    [
      counted(c.entities, 'entity', 'entities'),
      counted(c.facts, 'fact'),
      counted(c.documents, 'document'),
      counted(c.notes, 'note'),
      counted(c.handoffs, 'handoff'),
    ].join(', ');
  const lines = [
    {
      load: 'loaded into an empty scope',
      load_then_import: 'loaded into an empty scope (its first piece in bulk, the rest record by record)',
      import: 'imported into a scope holding knowledge',
    }[r.mode],
    `imported: ${n(r.imported)}`,
    `unchanged: ${n(r.unchanged)}`,
  ];
  if (r.skipped.length > 0) lines.push(`skipped ${counted(r.skipped.length, 'line')}:`);
  for (const s of r.skipped.slice(0, 20)) lines.push(`  ${where(s)}: ${s.reason}`);
  if (r.not_reproduced.length > 0) lines.push(`not reproduced ${counted(r.not_reproduced.length, 'record')}:`);
  for (const n of r.not_reproduced.slice(0, 20)) lines.push(`  ${where(n)}: ${String(n.what)}: ${String(n.why)}`);
  return `${lines.join('\n')}\n`;
}

/**
 * `cairn import PATH [--user ID] [--scope S] [--in-pieces]`. A Memory Package directory (`cairn
 * export`) is verified first (manifest, sizes, sha256 digests, every line a record) and goes only
 * into an empty scope, by default the one it came from, in one transaction: a record that fails
 * its checks refuses the package, naming its file and line, and nothing is stored. One
 * transaction holds the package several times in memory; with `--in-pieces` it goes in as an
 * export file does instead (the first piece by bulk load, the rest a page at a time, each
 * committed alone, a record failing its checks skipped and listed), so memory follows the piece,
 * and an interrupted run leaves the pieces before it (`cairn import DIR/records.jsonl` into the
 * same scope finishes it, matching what is stored). An export file (JSON lines) goes into a scope
 * (default user and scope `default`): a bulk load when the scope is empty, else `import` page by
 * page.
 * Through the running node's admin API (`CAIRN_ADMIN_TOKEN`) when a node holds the store, else on
 * the store directly. Exit 0 when every line was taken, 1 when some were skipped or it failed,
 * 2 on bad usage.
 */
export async function runImport(a: ImportArgs, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if ((a.scopes?.length ?? 0) > 1) throw usage('--scope', 'give one scope');
  const pieceRefused = loadPieceRefusal(env);
  if (pieceRefused !== null) {
    throw new CliFailure('VALIDATION_ERROR', pieceRefused, EXIT_UNUSABLE, [
      { field: 'CAIRN_LOAD_PIECE_BYTES', message: pieceRefused },
    ]);
  }
  const inPieces = a.inPieces === true;
  // The file is read as a stream, twice for a package (verified whole first, then imported), so
  // memory follows `loadPieceBytes`, not the file's size.
  let body: () => AsyncIterable<Uint8Array>;
  let size: number;
  let verified: Verified | null = null;
  try {
    const st = statSync(a.file);
    if (st.isDirectory()) {
      if (!existsSync(join(a.file, MANIFEST))) throw notAPackage(a.file);
      try {
        verified = await verifyPackage(a.file);
        const { manifest } = verified;
        body = () => packageBytes(a.file, manifest);
        size = packageSize(manifest);
      } catch (err) {
        if (!(err instanceof PackageError)) throw err;
        const message = `${a.file}: the package does not verify, nothing was stored: ${err.message}`;
        throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: 'PATH', message: err.message }]);
      }
    } else {
      if (inPieces)
        throw usage(
          '--in-pieces',
          'only a Memory Package directory is imported in one transaction; a file already goes in pieces',
        );
      // Opened here, so an unreadable file is refused as such before anything is stored.
      const fd = openSync(a.file, 'r');
      refuseNoExportFile(a.file, fd, st.size);
      body = () => createReadStream('', { fd });
      size = st.size;
    }
  } catch (err) {
    if (err instanceof CliFailure) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new CliFailure('NOT_FOUND', `${a.file}: no such file or directory`, EXIT_FAILED, [
        { field: 'PATH', message: 'not found' },
      ]);
    }
    const message = err instanceof Error ? err.message : String(err);
    throw new CliFailure('VALIDATION_ERROR', `${a.file}: ${message}`, EXIT_UNUSABLE, [{ field: 'PATH', message }]);
  }
  const pkg = verified === null ? undefined : packageTarget(a, verified);
  const { user, scope } = userScope(a.user ?? pkg?.user ?? 'default', a.scopes?.[0] ?? pkg?.scope ?? 'default');
  const whole = verified === null || inPieces ? undefined : { bytes: size };
  let result: FileImported;
  try {
    result = await importInto(a.dataDir, { user, scope, size, whole, empty: inPieces }, body(), env);
  } catch (err) {
    if (verified !== null && isNotEmpty(err)) {
      const message = `user ${user}'s scope ${scope} is not empty: a Memory Package goes only into an empty scope; choose another with --scope S (or --user ID)`;
      throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: '--scope', message: 'not empty' }]);
    }
    throw verified === null ? err : packageRefusal(a.file, verified, err);
  }
  const shown = verified === null ? result : placed(result, verified);
  process.stdout.write(a.json ? `${JSON.stringify(shown)}\n` : summary(shown));
  return result.skipped.length > 0 ? 1 : 0;
}

/**
 * The user and scope a package's manifest names, for those `--user` and `--scope` leave to it:
 * refused naming the manifest when one is missing or no name (found by QA: a manifest without
 * `source` failed as "Cannot read properties of undefined (reading 'user')", and one naming
 * "a:b" as "--user: must not contain ':'", an option the user had not given).
 */
function packageTarget(a: ImportArgs, v: Verified): { user: string; scope: string } {
  const source = (v.manifest as { source?: Record<string, unknown> }).source;
  const given = { user: a.user, scope: a.scopes?.[0] };
  for (const key of ['user', 'scope'] as const) {
    const why = given[key] === undefined ? nameProblem(source?.[key]) : null;
    if (why !== null) {
      const message = `${a.file}: its ${MANIFEST} names no ${key} to import into (source.${key} ${JSON.stringify(source?.[key] ?? null)}: ${why}): give one with --${key}`;
      throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: 'PATH', message }]);
    }
  }
  return { user: String(given.user ?? source?.user), scope: String(given.scope ?? source?.scope) };
}

/**
 * A directory given as a package that holds no manifest, said with what it is likely meant as: a
 * backup (a store) goes back with restore, a package's records file by its own path.
 */
function notAPackage(dir: string): CliFailure {
  const then = existsSync(join(dir, DATA_FILE))
    ? `it holds a store; a backup goes back with \`cairn database restore ${dir}\``
    : existsSync(join(dir, RECORDS))
      ? `an export file in it is imported by its path (cairn import ${join(dir, RECORDS)} --user U --scope S)`
      : 'give a directory `cairn export` wrote, or an export file (JSON lines)';
  return new CliFailure(
    'VALIDATION_ERROR',
    `${dir} is not a Memory Package (no ${MANIFEST} in it): ${then}`,
    EXIT_FAILED,
    [{ field: 'PATH', message: `no ${MANIFEST}` }],
  );
}

/** Whether `err` is the import's refusal of a target scope that holds something (import-file.ts). */
function isNotEmpty(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.code !== 'VALIDATION_ERROR') return false;
  const [d] = err.details as { field?: unknown; message?: unknown }[];
  return d?.field === 'scope' && d.message === 'not empty';
}

/** The most of a file read to judge its first record (an export file's is its header, a few hundred bytes). */
const HEAD_READ = 64 * 1024;

/**
 * Refuses a file that is no export file, before anything is stored or a store made, as bad input
 * (exit 1) naming the file: one holding no record (empty, or only blank lines, within
 * `HEAD_READ`; found by an audit: an empty file was "loaded into an empty scope", exit 0, so a
 * failed export piped into a file looked imported), or whose first line that is not blank, when
 * whole within `HEAD_READ`, is no record (`export-head.ts`: `[]`, `{}`, an error page). The
 * import judges the body the same way, so a longer first line is refused there.
 */
function refuseNoExportFile(file: string, fd: number, size: number): void {
  const head = Buffer.alloc(Math.min(size, HEAD_READ));
  const read = readSync(fd, head, 0, head.length, 0);
  const line = firstLine(head.subarray(0, read));
  if (line === null) {
    if (size > HEAD_READ) return;
    const what = size === 0 ? 'is empty (0 bytes)' : 'holds only blank lines';
    const message = `${file} ${what}: nothing to import (${EXPORT_FILE})`;
    throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: 'PATH', message: 'no records' }]);
  }
  // A line that may go on past the read is left to the import.
  const problem = line.ended || read === size ? headProblem(line) : null;
  if (problem === null) return;
  // A package's manifest (pretty-printed: its first line is "{") was said to be "not JSON".
  if (basename(file) === MANIFEST) {
    const dir = dirname(file);
    const message = `${file} is a Memory Package's manifest: import the package by its directory (cairn import ${dir})`;
    throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: 'PATH', message: 'a manifest' }]);
  }
  const message = `${file} is not an export file: ${problem}; ${EXPORT_FILE}`;
  throw new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, [{ field: 'PATH', message: problem }]);
}

/**
 * Imports `body` into the scope through the node holding the store (`CAIRN_ADMIN_TOKEN`), else
 * on the store directly; `whole` (a Memory Package of that many bytes) goes in whole or not at
 * all; `empty` (a package in pieces) only into an empty scope.
 */
async function importInto(
  dataDir: string,
  to: { user: string; scope: string; size: number; whole: { bytes: number } | undefined; empty: boolean },
  body: AsyncIterable<Uint8Array>,
  env: NodeJS.ProcessEnv,
): Promise<FileImported> {
  const { user, scope, size, whole, empty } = to;
  const node = findRunningNode(dataDir);
  if (node !== null) {
    const token = env.CAIRN_ADMIN_TOKEN;
    if (token === undefined || token === '') {
      throw new CliFailure(
        'UNAUTHENTICATED',
        `a node is running at ${node.url}; set CAIRN_ADMIN_TOKEN to its admin token`,
      );
    }
    const into: Record<string, string> = whole !== undefined ? { empty: 'true' } : empty ? { empty: 'pieces' } : {};
    const query = { user, scope, ...into };
    return throughNode(node, token, query, body, size);
  }
  // Before the store is opened: a package refused changes nothing, not even the data dir.
  if (whole !== undefined) wholeFits(whole.bytes);
  const store = await openStore(dataDir);
  try {
    return await importLines(store, { tenant: 'local', user, scope, agent: CLI_AGENT }, body, { whole, empty });
  } finally {
    await store.close();
  }
}

/**
 * A package's records refused by the import (nothing was stored): each line it names (`line N`
 * of the records read one file after another) said as the file and line it is in.
 */
function packageRefusal(file: string, v: Verified, err: unknown): unknown {
  if (!(err instanceof ApiError) || err.code !== 'VALIDATION_ERROR') return err;
  const details = err.details.map((d) => {
    const { field, message } = d as { field?: unknown; message?: unknown };
    const line = typeof field === 'string' ? /^line (\d+)$/.exec(field) : null;
    return line === null ? d : { field: packageLine(v, Number(line[1]) - 1), message };
  });
  const named = details
    .filter((d) => /line \d+$/.test(String((d as { field?: unknown }).field)))
    .map((d) => `${(d as { field: string }).field}: ${String((d as { message?: unknown }).message)}`);
  if (named.length === 0) return err;
  const message = `${file}: the package does not verify: ${err.message}: ${named.slice(0, 5).join('; ')}`;
  return new CliFailure('VALIDATION_ERROR', message, EXIT_FAILED, details);
}
