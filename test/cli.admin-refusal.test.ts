import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';

// Through a running node, a CAIRN_ADMIN_TOKEN that is an agent's is refused saying whose token
// it is and what to set instead. The operator's lifecycle probe got "this route needs an admin
// token" from `token`, `database backup|compact|check` and `import`: no word of the variable, and
// "route" is the HTTP API's term, not the CLI's.

const ADMIN = 'cairn_admin-refusal-test-admin-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
let data: string;
let agent: string;
let node: ChildProcess;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('admin-refusal'));
  data = join(root, 'data');
  node = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: 'ignore',
  });
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const made = await cairn(['token', 'create', '--agent', 'worker', '--data-dir', data, '--json'], {
    CAIRN_ADMIN_TOKEN: ADMIN,
  });
  agent = (JSON.parse(made.stdout) as { token: string }).token;
});
afterAll(async () => {
  node.kill('SIGKILL');
  await cleanup();
});

it.each([
  ['token', 'list'],
  ['token', 'create', '--agent', 'other'],
  ['database', 'backup', 'BACKUP'],
  ['database', 'compact', '--purge'],
  ['database', 'check'],
])('cairn %s %s with an agent’s token: FORBIDDEN naming CAIRN_ADMIN_TOKEN, nothing done', async (...args) => {
  const argv = args.map((a) => (a === 'BACKUP' ? join(root, 'backup') : a));
  const r = await cairn([...argv, '--data-dir', data, '--json'], { CAIRN_ADMIN_TOKEN: agent });
  expect(r.code).toBe(1);
  const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string; details: unknown[] } };
  expect(error.code).toBe('FORBIDDEN');
  expect(error.message).toContain("this is agent worker's token (role agent)");
  expect(error.message).toContain('set CAIRN_ADMIN_TOKEN to an admin token of the node');
  expect(error.details).toContainEqual(expect.objectContaining({ field: 'Authorization' }));
  expect(existsSync(join(root, 'backup'))).toBe(false);
  const text = await cairn([...argv, '--data-dir', data], { CAIRN_ADMIN_TOKEN: agent });
  expect(text.stderr).toContain('FORBIDDEN: Authorization: this is agent worker');
});

it('a CLI command refused RATE_LIMITED says the admin token’s minute is spent and to give agents their own tokens', async () => {
  const data2 = join(root, 'limited');
  const limited = spawn(process.execPath, [CLI, 'serve', '--data-dir', data2, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN, CAIRN_RATE_LIMIT: '2' },
    stdio: 'ignore',
  });
  try {
    for (let i = 0; i < 100 && !existsSync(join(data2, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
    let last = { code: 0, stdout: '' };
    for (let i = 0; i < 5 && last.code === 0; i++) {
      last = await cairn(['token', 'list', '--data-dir', data2, '--json'], { CAIRN_ADMIN_TOKEN: ADMIN });
    }
    expect(last.code).toBe(1);
    const { error } = JSON.parse(last.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe('RATE_LIMITED');
    // The wait is @fastify/rate-limit's spelling of it: "42 seconds", or "1 minute" when the window just began.
    expect(error.message).toMatch(/^too many requests; retry in [^:]+: CAIRN_ADMIN_TOKEN's requests per minute/);
    expect(error.message).toContain('give each agent a token of its own (`cairn token create --agent NAME`)');
  } finally {
    limited.kill('SIGKILL');
  }
});
