import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The records of `records` a package counts: every one but the export header. */
export const stored = (records: readonly { kind?: unknown }[]) => records.filter((r) => r.kind !== 'header').length;

/** Writes `records` (export records, header first) as a package into `dir`, which must be empty. */
export function writePackage(dir: string, records: { kind?: unknown }[], source: Manifest['source']): Manifest {
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new PackageError(`${dir} is not empty`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const body = Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  writeFileSync(join(dir, RECORDS), body, { mode: 0o600 });
  const manifest: Manifest = {
    format: FORMAT,
    version: VERSION,
    created_at: new Date().toISOString(),
    source,
    files: [{ name: RECORDS, bytes: body.length, sha256: sha256(body), records: stored(records) }],
  };
  // The manifest last: a package without one is visibly unfinished.
  writeFileSync(join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return manifest;
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

/**
 * Verifies the package in `dir` — the manifest, each file's size, sha256 and record count (by the
 * manifest's version), every line a JSON record with a `kind`, an export header first — and
 * returns its records as JSON lines with the manifest. Throws a `PackageError` naming the first
 * thing wrong.
 */
export function readPackage(dir: string): { manifest: Manifest; lines: Buffer } {
  const manifest = readManifest(dir);
  const parts: Buffer[] = [];
  for (const f of manifest.files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, f.name));
    } catch (err) {
      throw new PackageError(`${f.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (bytes.length !== f.bytes)
      throw new PackageError(`${f.name}: ${bytes.length} bytes, the manifest says ${f.bytes}`);
    if (sha256(bytes) !== f.sha256) throw new PackageError(`${f.name}: sha256 differs from the manifest's`);
    const lines = bytes.toString('utf8').split('\n');
    let records = 0;
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        throw new PackageError(`${f.name} line ${i + 1}: not JSON`);
      }
      const kind = (record as { kind?: unknown } | null)?.kind;
      if (typeof kind !== 'string') throw new PackageError(`${f.name} line ${i + 1}: a record has a string kind`);
      if (parts.length === 0 && i === 0 && kind !== 'header') {
        throw new PackageError(`${f.name} line 1: the export header comes first`);
      }
      if (kind !== 'header' || manifest.version === 1) records += 1;
    }
    if (records !== f.records) {
      const what = manifest.version === 1 ? 'records, header included' : 'records besides the header';
      throw new PackageError(`${f.name}: holds ${records} ${what}, the manifest says ${f.records}`);
    }
    parts.push(bytes);
  }
  return { manifest, lines: Buffer.concat(parts) };
}
