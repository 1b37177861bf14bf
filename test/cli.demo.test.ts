import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';

// `cairn demo`: a node on a temporary store and two agent processes with their own tokens over MCP;
// the store is deleted afterwards, an interrupted demo's too.

let home: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir: home, cleanup } = await tempDir('demo-home'));
});
afterEach(async () => cleanup());

it('shows one agent process finding what another left, then deletes its store and touches no config', async () => {
  const r = await cairn(['demo'], { HOME: home, XDG_CONFIG_HOME: home, CAIRN_DATA_DIR: `${home}/not-used` });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toContain('note_write: deploy.window version 1 (created)');
  expect(r.stdout).toMatch(/recall "Priya": answered\n( {4}.*\n)* {4}Priya Raman works_at Acme Robotics/);
  expect(r.stdout).toContain('handoff_resume refund-service-release: resumed');
  expect(r.stdout).toContain('(written by demo-writer)');
  const store = r.stdout.match(/on a temporary store \((.+)\)/)?.[1];
  expect(store).toBeDefined();
  expect(existsSync(store ?? '')).toBe(false);
  expect(readdirSync(home)).toEqual([]);
});

it.each(['SIGINT', 'SIGTERM'] as const)('an interrupted demo (%s) deletes its temporary store too', async (signal) => {
  const tmp = join(home, 'tmp');
  mkdirSync(tmp);
  const child = spawn(process.execPath, [CLI, 'demo'], {
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: home, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    // Interrupted while the writer runs: the node, its store and an agent process are all up.
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString('utf8').includes('agent demo-writer')) resolve();
      }),
    );
    expect(readdirSync(tmp).filter((f) => f.startsWith('cairn-demo-'))).toHaveLength(1);
    const ended = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, s) => r(s)));
    child.kill(signal);
    expect(await ended).toBe(signal);
    expect(readdirSync(tmp)).toEqual([]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

it('a demo whose output is closed (`cairn demo | head -2`) deletes its temporary store and exits 1', async () => {
  const tmp = join(home, 'tmp');
  mkdirSync(tmp);
  const child = spawn(process.execPath, [CLI, 'demo'], {
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: home, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    // Closed before the demo writes: its first line, once the node and store are up, meets EPIPE.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(stderr).toBe('');
    // It did not run to its end, so it does not say it did; and it leaves nothing behind.
    expect(code).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
