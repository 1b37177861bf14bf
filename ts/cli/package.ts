import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { makeDirs } from '../server/make-dirs.js';
import { linePieces } from '../service/line-pieces.js';
import { notADirectory } from './data-dir.js';
import { someOf } from './foreign-dir.js';
import { undoOnInterrupt } from './interrupt.js';

/**
 * A Memory Package (DESIGN.md §4): a directory holding `manifest.json` and the export records as
 * JSON lines, each file named in the manifest with its size, sha256 digest and record count. What
 * `cairn export` writes and `cairn import` verifies in full before anything reaches a store.
 * Version 2 counts the records stored, the export header excluded (what `cairn export` reports);
 * version 1 counted the header too, and is still read with that meaning.
 */
export const MANIFEST = 'manifest.json';
export const RECORDS = 'records.jsonl';
const FORMAT = 'cairn.memory-package';
const VERSION = 2;
const VERSIONS: readonly number[] = [1, VERSION];

export interface PackageFile {
  name: string;
  bytes: number;
  sha256: string;
  records: number;
}

export interface Manifest {
  format: typeof FORMAT;
  version: 1 | typeof VERSION;
  created_at: string;
  source: { user: string; scope: string };
  files: PackageFile[];
}

/** A package that does not verify; nothing was stored. */
export class PackageError extends Error {}

/** The records of `records` a package counts: every one but the export header. */
const stored = (records: readonly { kind?: unknown }[]) => records.filter((r) => r.kind !== 'header').length;

/**
 * Writes a scope's export records, page by page as `pages` gives them (header first; a page's
 * repeated header is dropped), as a package into `dir`, which must be empty. One page is held at
 * a time, so a scope of any size exports in bounded memory.
 */
export async function writePackage(
  dir: string,
  pages: AsyncIterable<readonly { kind?: unknown }[]>,
  source: Manifest['source'],
): Promise<Manifest> {
  const notDir = notADirectory(dir);
  if (notDir !== null) throw new PackageError(`${dir} ${notDir}`);
  const held = existsSync(dir) ? readdirSync(dir) : [];
  if (held.length > 0) {
    // What is there, and what to do (found by QA: "DIR is not empty" alone, run again nightly
    // into yesterday's package, said neither).
    const then = held.includes(MANIFEST)
      ? 'it holds a package already: give a new DIR (a dated one for each run), or move that one aside'
      : 'a package goes into an empty or new directory: give another DIR';
    throw new PackageError(`${dir} is not empty (${someOf(held)}): ${then}`);
  }
  const made = makeDirs(dir, 0o700);
  // A scope that could not be read whole, or an export refused or interrupted, leaves no half
  // package behind, nor the directories it made for one (an audit found an empty DEST left by a
  // refused export); a directory that was there before stays, as does anything another wrote.
  const unfinished = () => {
    rmSync(join(dir, RECORDS), { force: true });
    // Innermost first; rmdir removes only an empty directory, so one holding another's file stays.
    for (const d of [...made].reverse()) {
      try {
        rmdirSync(d);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') break;
      }
    }
  };
  try {
    return await undoOnInterrupt(unfinished, () => writeRecords(dir, pages, source));
  } catch (err) {
    unfinished();
    throw err;
  }
}

async function writeRecords(
  dir: string,
  pages: AsyncIterable<readonly { kind?: unknown }[]>,
  source: Manifest['source'],
): Promise<Manifest> {
  const hash = createHash('sha256');
  let bytes = 0;
  let records = 0;
  let lines = 0;
  const fd = openSync(join(dir, RECORDS), 'wx', 0o600);
  try {
    for await (const page of pages) {
      // Each page repeats the header; the package keeps the first.
      const kept = page.filter((r) => r.kind !== 'header' || lines === 0);
      if (kept.length === 0) continue;
      lines += kept.length;
      records += stored(kept);
      const chunk = Buffer.from(kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
      hash.update(chunk);
      bytes += chunk.length;
      writeAll(fd, chunk);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const manifest: Manifest = {
    format: FORMAT,
    version: VERSION,
    created_at: new Date().toISOString(),
    source,
    files: [{ name: RECORDS, bytes, sha256: hash.digest('hex'), records }],
  };
  // The manifest last: a package without one is visibly unfinished.
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
}

function writeAll(fd: number, chunk: Buffer) {
  for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at);
}

/** The manifest of `dir`, checked for shape. */
function readManifest(dir: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'));
  } catch (err) {
    throw new PackageError(`${MANIFEST}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const m = raw as Partial<Manifest>;
  if (m.format !== FORMAT) throw new PackageError(`${MANIFEST}: format is not ${JSON.stringify(FORMAT)}`);
  if (!VERSIONS.includes(m.version as number)) {
    throw new PackageError(`${MANIFEST}: version ${String(m.version)} is not one of ${VERSIONS.join(', ')}`);
  }
  if (!Array.isArray(m.files) || m.files.length === 0) throw new PackageError(`${MANIFEST}: names no files`);
  for (const f of m.files) {
    const ok =
      typeof f?.name === 'string' &&
      /^[A-Za-z0-9._-]+$/.test(f.name) &&
      f.name !== MANIFEST &&
      Number.isSafeInteger(f.bytes) &&
      Number.isSafeInteger(f.records) &&
      f.records >= 0 &&
      typeof f.sha256 === 'string' &&
      /^[0-9a-f]{64}$/.test(f.sha256);
    if (!ok) throw new PackageError(`${MANIFEST}: a file entry is malformed: ${JSON.stringify(f)}`);
  }
  return m as Manifest;
}

/** Bytes of a package file read at a time while it is verified. */
const VERIFY_PIECE = 8 << 20;

/** A verified package: its manifest, and how many lines each of its files holds (in its order). */
export interface Verified {
  manifest: Manifest;
  lines: number[];
}

/**
 * Verifies the package in `dir` — the manifest, each file's size, sha256 and record count (by the
 * manifest's version), every line a JSON record with a `kind`, an export header first — reading
 * each file a piece at a time. Throws a `PackageError` naming the first thing wrong. What the
 * records say is checked by the import itself, which stores all of them or none.
 */
export async function verifyPackage(dir: string): Promise<Verified> {
  const manifest = readManifest(dir);
  const lines: number[] = [];
  for (const [n, f] of manifest.files.entries()) {
    const hash = createHash('sha256');
    let bytes = 0;
    let records = 0;
    // Lines as the import counts them, blank ones too: newlines, and a last line without one.
    let lineCount = 0;
    let endsLine = true;
    try {
      // A cut file would otherwise be named by its cut last line ("not JSON"): its size says it.
      const size = statSync(join(dir, f.name)).size;
      if (size !== f.bytes) throw new PackageError(`${f.name}: ${size} bytes, the manifest says ${f.bytes}`);
      for await (const piece of linePieces(createReadStream(join(dir, f.name)), VERIFY_PIECE)) {
        hash.update(piece.bytes);
        bytes += piece.bytes.length;
        const parts = piece.bytes.toString('utf8').split('\n');
        if (piece.bytes.length > 0) {
          lineCount = piece.first + parts.length - 1;
          endsLine = piece.bytes[piece.bytes.length - 1] === 0x0a;
        }
        for (const [i, line] of parts.entries()) {
          if (line.trim() === '') continue;
          const at = piece.first + i;
          let record: unknown;
          try {
            record = JSON.parse(line);
          } catch {
            throw new PackageError(`${f.name} line ${at + 1}: not JSON`);
          }
          const kind = (record as { kind?: unknown } | null)?.kind;
          if (typeof kind !== 'string') throw new PackageError(`${f.name} line ${at + 1}: a record has a string kind`);
          if (n === 0 && at === 0 && kind !== 'header') {
            throw new PackageError(`${f.name} line 1: the export header comes first`);
          }
          if (kind !== 'header' || manifest.version === 1) records += 1;
        }
      }
    } catch (err) {
      if (err instanceof PackageError) throw err;
      throw new PackageError(`${f.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (bytes !== f.bytes) throw new PackageError(`${f.name}: ${bytes} bytes, the manifest says ${f.bytes}`);
    if (hash.digest('hex') !== f.sha256) throw new PackageError(`${f.name}: sha256 differs from the manifest's`);
    if (records !== f.records) {
      const what = manifest.version === 1 ? 'records, header included' : 'records besides the header';
      throw new PackageError(`${f.name}: holds ${records} ${what}, the manifest says ${f.records}`);
    }
    lines.push(lineCount + (endsLine ? 0 : 1));
  }
  return { manifest, lines };
}

/**
 * Where line `index` (from 0) of a package's records, its files read one after another, lies: its
 * file and its line there (from 1); null past the last.
 */
export function packagePlace(v: Verified, index: number): { file: string; line: number } | null {
  let first = 0;
  for (const [n, f] of v.manifest.files.entries()) {
    const count = v.lines[n] ?? 0;
    if (index < first + count) return { file: f.name, line: index - first + 1 };
    first += count;
  }
  return null;
}

/** `packagePlace` said as a reader reads it: `records.jsonl line 7`. */
export function packageLine(v: Verified, index: number): string {
  const at = packagePlace(v, index);
  return at === null ? `line ${index + 1}` : `${at.file} line ${at.line}`;
}

/** The records of a verified package as one byte stream: its files in the manifest's order. */
export async function* packageBytes(dir: string, manifest: Manifest): AsyncGenerator<Uint8Array> {
  for (const f of manifest.files) yield* createReadStream(join(dir, f.name));
}

/** The bytes of a package's records (the sum of its files). */
export function packageSize(manifest: Manifest): number {
  return manifest.files.reduce((n, f) => n + f.bytes, 0);
}
