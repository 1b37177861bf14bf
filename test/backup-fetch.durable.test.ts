import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it, vi } from 'vitest';

import { backupFromNode } from '../ts/cli/backup-fetch.js';
import type { NodeFile } from '../ts/server/node-file.js';
import { CLI, tempDir } from './helpers.js';

// A backup through a node is reported only once its name is durable: after the rename that
// makes it `data.cairn`, DEST itself is synced, or a power loss could take the reported backup.
// What a crash would lose cannot be seen from here, so the syncs the CLI asks for are recorded.

const synced = vi.hoisted(() => [] as { path: string; withBackup: boolean }[]);
vi.mock('node:fs', async (original) => {
  const real = await original<typeof import('node:fs')>();
  const fsyncSync = (fd: number) => {
    const path = real.readlinkSync(`/proc/self/fd/${fd}`);
    synced.push({ path, withBackup: real.existsSync(join(path, 'data.cairn')) });
    real.fsyncSync(fd);
  };
  return { ...real, default: { ...real, fsyncSync }, fsyncSync };
});

const ADMIN = 'cairn_backup-durable-admin-token-0123456789abc';
let dir: string;
let cleanup: () => Promise<void>;
let child: ChildProcess;
let node: NodeFile;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('backup-durable'));
  const data = join(dir, 'data');
  // The node in its own process, as users run it (this one's file system calls are recorded).
  child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  while (!fs.existsSync(join(data, 'node.json'))) await new Promise((r) => setTimeout(r, 50));
  node = JSON.parse(fs.readFileSync(join(data, 'node.json'), 'utf8')) as NodeFile;
});
afterAll(async () => {
  child.kill('SIGKILL');
  await cleanup();
});

it('syncs DEST after naming the backup data.cairn, before reporting it', async () => {
  const dest = join(dir, 'nightly');
  const report = await backupFromNode(node, ADMIN, dest);
  expect(report.dest).toBe(dest);
  expect(fs.readdirSync(dest)).toEqual(['data.cairn']);
  expect(synced).toContainEqual({ path: dest, withBackup: true });
});
