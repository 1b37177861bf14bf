import { existsSync, readdirSync } from 'node:fs';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { cairn, tempDir } from './helpers.js';

// `cairn demo`: a node on a temporary store and two agent processes with their own tokens over MCP.

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
