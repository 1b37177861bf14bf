import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { DATA_FILE } from '../engine/store-files.js';
import { STORE_FILES } from '../server/private-dir.js';
import { CliFailure, EXIT_UNUSABLE } from './failure.js';
import { MANIFEST, RECORDS } from './package.js';

/**
 * What a directory may hold before a store is made in it: Cairn's own files (a node's log left
 * by a start that failed), the staging dirs of a backup or restore, the `lost+found` of a
 * filesystem mounted there (a service's data dir on its own disk), and the `.DS_Store` macOS
 * leaves in a directory Finder opened.
 */
const OURS = new Set([...STORE_FILES, 'lost+found', '.DS_Store']);
const STAGING = /^\.(backup|restore)-/;

/** How many of the names found a refusal shows: enough to recognise the directory. */
const SHOWN = 4;

/**
 * Why a store must not be made in `dataDir`, or null: it holds no store but holds files that are
 * not Cairn's. Found by QA: `cairn init --data-dir ~/projects/app` (a mistyped path) put the
 * store among the user's files, and made them look like part of it to whoever backs it up or
 * removes it; `database restore` already took only an empty dir. A store already there, a
 * missing or empty directory, or one holding only what a store leaves (`OURS`) is fine.
 */
export function foreignDataDir(dataDir: string): string | null {
  if (existsSync(join(dataDir, DATA_FILE))) return null;
  let names: string[];
  try {
    names = readdirSync(dataDir);
  } catch {
    // Missing (it is made), or not readable: the writable check says so, with what to do.
    return null;
  }
  const others = names.filter((n) => !OURS.has(n) && !STAGING.test(n));
  if (others.length === 0) return null;
  // Found by QA: `cairn import PKG --data-dir PKG` (the package given twice) was refused as a
  // directory of someone's files.
  if (names.includes(MANIFEST) && names.includes(RECORDS)) {
    return `${dataDir} holds a Memory Package (${MANIFEST}, ${RECORDS}), not a store: give an empty or new directory for the store`;
  }
  return `${dataDir} holds no Cairn store and is not empty (${someOf(others)}): give an empty or new directory for the store`;
}

/**
 * A few of the entries `names` of a directory, enough for its owner to recognise it: names
 * first, dotfiles last (`README.md, src` says which directory it is sooner than `.git`).
 */
export function someOf(names: string[]): string {
  const byName = (a: string, b: string) =>
    Number(a.startsWith('.')) - Number(b.startsWith('.')) || (a < b ? -1 : a > b ? 1 : 0);
  const sorted = [...names].sort(byName);
  const more = sorted.length > SHOWN ? `, and ${sorted.length - SHOWN} more` : '';
  return `${sorted.slice(0, SHOWN).join(', ')}${more}`;
}

/** Refuses (exit 2, naming `--data-dir`) to make a store where `foreignDataDir` says it must not go. */
export function refuseForeignDataDir(dataDir: string): void {
  const why = foreignDataDir(dataDir);
  if (why !== null) {
    throw new CliFailure('VALIDATION_ERROR', why, EXIT_UNUSABLE, [{ field: '--data-dir', message: 'not empty' }]);
  }
}
