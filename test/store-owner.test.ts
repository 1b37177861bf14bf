import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { matchOwner } from '../ts/cli/store-owner.js';
import { tempDir } from './helpers.js';

// A CLI command run as root on a service's data dir (restore, an offline compact) gives the files
// it made the data dir's owner, so the service's user can still open them. Only the decision is
// tested here: giving a file away takes root, which the tests do not run as.

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('store-owner'));
});
afterEach(async () => {
  await cleanup();
});

it("run as root, gives each of Cairn's files in a data dir the dir's owner and group; as anyone else, none", () => {
  const data = join(dir, 'data');
  mkdirSync(data);
  for (const name of ['data.cairn', 'wal.cairn', 'LOCK', 'notes.txt']) writeFileSync(join(data, name), '');
  const { uid, gid } = statSync(data);
  const given: [string, number, number][] = [];
  const chown = (path: string, u: number, g: number) => given.push([basename(path), u, g]);
  matchOwner(data, { uid: 0, chown });
  expect(given.sort()).toEqual([
    ['LOCK', uid, gid],
    ['data.cairn', uid, gid],
    ['wal.cairn', uid, gid],
  ]);
  given.length = 0;
  matchOwner(data, { uid: 1000, chown });
  expect(given).toEqual([]);
});
