import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { startNode } from '../ts/server/node.js';
import { findRunningNode } from '../ts/server/node-file.js';
import { CLI, cairn, tempDir } from './helpers.js';
import { INITIALIZE, postMcp, stdioBridge, toolJson } from './mcp-client.js';

// The CLI as users run it: init, tokens (directly and through a running node), serve's lifecycle,
// and `cairn mcp` starting a node in the background.

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-node'));
});
afterEach(async () => {
  // Killed children are waited for: until one is gone it still holds the store's lock, and the
  // node.json it leaves would read as a background node to stop.
  const running = children.splice(0).filter((c) => c.exitCode === null && c.signalCode === null);
  const gone = running.map(exited);
  for (const c of running) c.kill('SIGKILL');
  await Promise.all(gone);
  await stopBackgroundNode();
  await cleanup();
});

/** Starts `cairn serve` on a free port and waits for its node.json. */
async function serve(env: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0', ...args], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100; i++) {
    if (existsSync(join(dir, 'node.json'))) {
      return { child, url: (JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { url: string }).url };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('serve did not start');
}

/** An MCP client on `cairn mcp` for the data dir, as a desktop client starts it (any free port). */
function bridge(name: string, token: string): Promise<Client> {
  return stdioBridge(name, ['--data-dir', dir], { CAIRN_TOKEN: token, CAIRN_PORT: '0', CAIRN_LOG_LEVEL: 'silent' });
}

/** Resolves once `ready()` holds, polling; fails after `ms`. */
async function until(ready: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ready(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error('condition not reached');
  }
}

/** Stops a node a bridge started on the data dir, if one runs, and waits for it to be gone. */
async function stopBackgroundNode(): Promise<void> {
  const node = findRunningNode(dir);
  if (node === null || node.pid === process.pid) return;
  process.kill(node.pid, 'SIGTERM');
  await until(() => !existsSync(join(dir, 'node.json')));
}

const exited = (c: ChildProcess) => new Promise<number | null>((resolve) => c.once('exit', (code) => resolve(code)));

it('init prints the admin token once as JSON, and refuses a second init', async () => {
  const r = await cairn(['init', '--data-dir', dir, '--json']);
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as { dataDir: string; token: string };
  expect(out.dataDir).toBe(dir);
  expect(out.token).toMatch(/^cairn_/);
  const again = await cairn(['init', '--data-dir', dir]);
  expect(again.code).toBe(1);
  expect(again.stdout).not.toContain('cairn_');
  // Found by QA: it said only `cairn token create --agent NAME`, an agent token, to someone who had
  // most likely lost the admin token; the admin form it names now makes one.
  expect(again.stderr).toContain('a lost admin token is replaced with `--role admin`');
  const json = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as {
    error: { details: unknown };
  };
  expect(json.error.details).toEqual([{ field: '--data-dir', message: 'already has tokens' }]);
  const admin = await cairn(['token', 'create', '--agent', 'ops', '--role', 'admin', '--data-dir', dir, '--json']);
  expect(JSON.parse(admin.stdout)).toMatchObject({ role: 'admin' });
});

it('token create/list/revoke work on the store directly', async () => {
  await cairn(['init', '--data-dir', dir]);
  const made = await cairn(['token', 'create', '--agent', 'claude', '--user', 'ann', '--data-dir', dir, '--json']);
  expect(made.code).toBe(0);
  const { token, agent, user, id } = JSON.parse(made.stdout) as Record<string, string>;
  expect({ agent, user }).toEqual({ agent: 'claude', user: 'ann' });
  const list = await cairn(['token', 'list', '--data-dir', dir]);
  expect(list.stdout).toContain('agent=claude');
  expect(list.stdout).not.toContain(token as string);
  expect((await cairn(['token', 'revoke', id as string, '--data-dir', dir])).code).toBe(0);
  expect((await cairn(['token', 'list', '--data-dir', dir, '--json'])).stdout).toContain('revokedAt');
  const bad = await cairn(['token', 'create', '--agent', 'a b', '--data-dir', dir]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--agent');
});

it('token create before init is refused, creating no store and no token, so init still works', async () => {
  const store = join(dir, 'store');
  const none = await cairn(['token', 'create', '--agent', 'claude', '--data-dir', store]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain(`no store at ${store}: run \`cairn init\``);
  expect(existsSync(store)).toBe(false);
  // A store without tokens (made by an import, say) is not initialised either.
  const file = join(dir, 'lines.jsonl');
  writeFileSync(file, `${JSON.stringify({ kind: 'entity', id: '1', name: 'A' })}\n`);
  expect((await cairn(['import', file, '--data-dir', store])).code).toBe(0);
  const first = await cairn(['token', 'create', '--agent', 'claude', '--data-dir', store, '--json']);
  expect(first.code).toBe(1);
  expect(JSON.parse(first.stdout).error).toMatchObject({ code: 'NOT_FOUND' });
  expect(first.stdout).toContain('run `cairn init`');
  const init = await cairn(['init', '--data-dir', store, '--json']);
  expect(init.code, init.stderr).toBe(0);
  expect((await cairn(['token', 'create', '--agent', 'claude', '--data-dir', store])).code).toBe(0);
});

it('serve: health, tokens through the admin API while running, graceful SIGTERM', async () => {
  // An operator-chosen admin token needs no `cairn_` prefix, only 32 characters or more.
  const admin = 'seeded-admin-token-for-the-cli-test-0000000';
  const { child, url } = await serve({ CAIRN_ADMIN_TOKEN: admin });
  expect(((await (await fetch(`${url}/health`)).json()) as { status: string }).status).toBe('ok');
  const made = await cairn(['token', 'create', '--agent', 'codex', '--data-dir', dir, '--json'], {
    CAIRN_ADMIN_TOKEN: admin,
  });
  expect(made.code).toBe(0);
  const { token } = JSON.parse(made.stdout) as { token: string };
  const who = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  expect(((await who.json()) as { agent: string }).agent).toBe('codex');
  const noAdmin = await cairn(['token', 'list', '--data-dir', dir], { CAIRN_ADMIN_TOKEN: '' });
  expect(noAdmin.code).toBe(1);
  expect(noAdmin.stderr).toContain('CAIRN_ADMIN_TOKEN');
  const done = exited(child);
  child.kill('SIGTERM');
  expect(await done).toBe(0);
  expect(existsSync(join(dir, 'node.json'))).toBe(false);
  // The store was closed cleanly: the CLI can open it again.
  expect((await cairn(['check', '--data-dir', dir])).code).toBe(0);
});

it('a CAIRN_ADMIN_TOKEN the node does not know is said as that setting, with how to get an admin token', async () => {
  // Found by a review: every command said only "UNAUTHENTICATED: the token is unknown or revoked",
  // naming neither the setting nor what to do when the admin token is lost.
  const admin = 'seeded-admin-token-for-the-cli-test-0000000';
  const { url } = await serve({ CAIRN_ADMIN_TOKEN: admin });
  const wrong = { CAIRN_ADMIN_TOKEN: 'cairn_rotated-elsewhere-0123456789abcdef' };
  const out = await tempDir('cli-node-out');
  const pkg = join(out.dir, 'pkg');
  const file = join(out.dir, 'records.jsonl');
  writeFileSync(file, `${JSON.stringify({ kind: 'entity', id: '1', name: 'Ann' })}\n`);
  for (const args of [
    ['token', 'list'],
    ['export', pkg],
    ['database', 'backup', join(out.dir, 'copy')],
    ['import', file, '--scope', 'x'],
  ]) {
    const r = await cairn([...args, '--data-dir', dir], wrong);
    expect(r.code, args.join(' ')).toBe(1);
    expect(r.stderr, args.join(' ')).toContain('UNAUTHENTICATED: the token is unknown or revoked');
    expect(r.stderr, args.join(' ')).toContain(`CAIRN_ADMIN_TOKEN is not a live token of the node at ${url}`);
    expect(r.stderr, args.join(' ')).toContain('cairn token create --agent NAME --role admin');
    const json = await cairn([...args, '--data-dir', dir, '--json'], wrong);
    expect(JSON.parse(json.stdout).error.code, args.join(' ')).toBe('UNAUTHENTICATED');
    expect(JSON.parse(json.stdout).error.message, args.join(' ')).toContain('CAIRN_ADMIN_TOKEN is not a live token');
  }
  expect(readdirSync(out.dir)).toEqual(['records.jsonl']);
  await out.cleanup();
});

it('serve takes its MCP session caps from CAIRN_MCP_SESSIONS and CAIRN_MCP_SESSIONS_PER_TOKEN', async () => {
  const admin = 'seeded-admin-token-for-the-cli-test-0000000';
  const { child, url } = await serve({
    CAIRN_ADMIN_TOKEN: admin,
    CAIRN_MCP_SESSIONS: '2',
    CAIRN_MCP_SESSIONS_PER_TOKEN: '1',
  });
  const token = async (agent: string) => {
    const made = await cairn(['token', 'create', '--agent', agent, '--data-dir', dir, '--json'], {
      CAIRN_ADMIN_TOKEN: admin,
    });
    return (JSON.parse(made.stdout) as { token: string }).token;
  };
  const [codex, claude, cursor] = [await token('codex'), await token('claude'), await token('cursor')];
  const sessionOf = async (t: string) => {
    const r = await postMcp(url, t, INITIALIZE);
    expect(r.status).toBe(200);
    return r.headers.get('mcp-session-id') ?? '';
  };
  const ping = async (t: string, session: string) =>
    (
      await postMcp(url, t, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }), {
        'mcp-session-id': session,
        'mcp-protocol-version': '2025-06-18',
      })
    ).status;
  // One session a token: codex's second initialize closes its first.
  const first = await sessionOf(codex);
  const second = await sessionOf(codex);
  expect(await ping(codex, first)).toBe(404);
  expect(await ping(codex, second)).toBe(200);
  // Two a node: claude takes the second place, cursor finds none.
  await sessionOf(claude);
  expect((await postMcp(url, cursor, INITIALIZE)).status).toBe(503);
  expect(await ping(codex, second)).toBe(200);
  const done = exited(child);
  child.kill('SIGTERM');
  expect(await done).toBe(0);
});

it('a second serve on a store a node holds could not run (exit 2): it names the node and says to go through it', async () => {
  const { child, url } = await serve({ CAIRN_ADMIN_TOKEN: 'seeded-admin-token-for-the-cli-test-0000000' });
  const r = await cairn(['serve', '--data-dir', dir, '--port', '0']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(url);
  expect(r.stderr).toContain(`pid ${child.pid}`);
  expect(r.stderr).toContain('go through that node');
  // The first node still serves.
  expect((await fetch(`${url}/health`)).status).toBe(200);
});

it('refuses a non-loopback bind when no token exists (could not run: exit 2), creating nothing', async () => {
  const r = await cairn(['serve', '--data-dir', dir, '--host', '0.0.0.0', '--port', '0']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('refusing to listen');
  // Found by an audit: the refused start left a store (data.cairn, wal.cairn, LOCK) behind.
  expect(readdirSync(dir)).toEqual([]);
  const fresh = join(dir, 'fresh');
  const again = await cairn(['serve', '--data-dir', fresh, '--host', '0.0.0.0', '--port', '0']);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain(`cairn init --data-dir ${fresh}`);
  expect(existsSync(fresh)).toBe(false);
});

it('cairn mcp starts a node in the background when none runs', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  const client = await bridge('autostart', init.token);
  try {
    expect((await client.listTools()).tools.length).toBe(15);
  } finally {
    await client.close();
    const node = JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { pid: number };
    process.kill(node.pid, 'SIGTERM');
    for (let i = 0; i < 50 && existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  }
});

it('cairn mcp on a data dir with no store starts no node there and makes no store (a mistyped --data-dir)', async () => {
  const r = await cairn(['mcp', '--data-dir', dir], { CAIRN_TOKEN: 'cairn_of-another-store', CAIRN_PORT: '0' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(
    `cairn mcp: no store at ${dir}: check --data-dir (or CAIRN_DATA_DIR), or run \`cairn init`,
  );
  expect(r.stderr).not.toContain('starting one in the background');
  for (const file of ['data.cairn', 'node.json', 'node.log']) expect(existsSync(join(dir, file)), file).toBe(false);
});

// Found by QA: on a store with no token (one `cairn import` made) the background node made an admin
// token and printed it to its stderr, which is node.log: a live admin credential in a log file
// nobody was shown, while the bridge's CAIRN_TOKEN could be none of the store's anyway.
it('cairn mcp on a store with no token: its node makes no admin token (none in node.log) and says to run init', async () => {
  await (await Store.open(dir)).close();
  const r = await cairn(['mcp', '--data-dir', dir], { CAIRN_TOKEN: 'cairn_of-another-store', CAIRN_PORT: '0' });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`holds no live token, and a node started by \`cairn mcp\` makes no admin token`);
  expect(r.stderr).toContain(`run \`cairn init --data-dir ${dir}\``);
  expect(readFileSync(join(dir, 'node.log'), 'utf8')).not.toMatch(/cairn_[A-Za-z0-9_-]{40,}/);
  expect(JSON.parse((await cairn(['token', 'list', '--data-dir', dir, '--json'])).stdout)).toEqual({ tokens: [] });
  expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
});

it('a background node logs no line per request, and node.log is set aside once it reaches 8 MiB', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  const log = join(dir, 'node.log');
  const old = 8 << 20;
  writeFileSync(log, `${'x'.repeat(old - 1)}\n`, { mode: 0o600 });
  // The bridge's environment sets no CAIRN_LOG_LEVEL, as a client's config does not.
  const client = await stdioBridge('logs', ['--data-dir', dir], { CAIRN_TOKEN: init.token, CAIRN_PORT: '0' });
  try {
    for (let i = 0; i < 5; i++)
      expect(toolJson(await client.callTool({ name: 'memory_status', arguments: {} })).isError).toBe(false);
  } finally {
    await client.close();
    await stopBackgroundNode();
  }
  expect(statSync(`${log}.1`).size).toBe(old);
  const text = readFileSync(log, 'utf8');
  expect(text).toContain('cairn: serving');
  expect(text).not.toContain('"req"');
  expect(text.length).toBeLessThan(1000);
});

it('a node.json left by a killed node whose pid lives again (here this test process) is ignored: commands use the store, cairn mcp starts a node that replaces it', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  // After a reboot a crashed node's pid often names another live process: the store's lock is free.
  const stale = { url: 'http://127.0.0.1:1', pid: process.pid, dataDir: dir, startedAt: '2026-01-01T00:00:00Z' };
  writeFileSync(join(dir, 'node.json'), JSON.stringify(stale));
  const list = await cairn(['token', 'list', '--data-dir', dir, '--json'], { CAIRN_ADMIN_TOKEN: '' });
  expect(list.code, list.stderr).toBe(0);
  expect(JSON.parse(list.stdout)).toMatchObject({ tokens: [expect.objectContaining({ role: 'admin' })] });

  const client = await bridge('stale-node-file', init.token);
  try {
    expect((await client.listTools()).tools.length).toBe(15);
  } finally {
    await client.close();
    const node = JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { pid: number; url: string };
    expect(node.pid).not.toBe(process.pid);
    expect(node.url).not.toBe(stale.url);
    process.kill(node.pid, 'SIGTERM');
    for (let i = 0; i < 50 && existsSync(join(dir, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  }
});

it('bridges started at the same moment with no node running all end up on the one node that started', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  const tokens = [init.token];
  for (const agent of ['claude', 'codex']) {
    const made = await cairn(['token', 'create', '--agent', agent, '--data-dir', dir, '--json']);
    tokens.push((JSON.parse(made.stdout) as { token: string }).token);
  }
  // Each starts a node; the store lets one open it, and the others wait for that one.
  const clients = await Promise.all(tokens.map((token, i) => bridge(`login-${i}`, token)));
  try {
    const agents = [];
    for (const client of clients) {
      const r = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
      expect(r.isError, JSON.stringify(r.body)).toBe(false);
      agents.push((r.body.identity as { agent: string }).agent);
    }
    expect(agents.slice(1)).toEqual(['claude', 'codex']);
  } finally {
    for (const client of clients) await client.close();
  }
});

it('cairn mcp whose node finds the store held waits for the node that comes up there, and uses it', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  // Held as the node of a bridge started a moment before holds it until it listens and announces itself.
  const held = await Store.open(dir);
  const connecting = bridge('waits', init.token);
  connecting.catch(() => undefined);
  const log = join(dir, 'node.log');
  await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('is held by another process'));
  await held.close();
  const node = await startNode({ dataDir: dir, port: 0, logLevel: 'silent' });
  try {
    const client = await connecting;
    const r = toolJson(await client.callTool({ name: 'memory_status', arguments: {} }));
    expect(r.isError, JSON.stringify(r.body)).toBe(false);
    expect(findRunningNode(dir)).toMatchObject({ pid: process.pid, url: node.url });
    await client.close();
  } finally {
    await node.close();
  }
});

it('a background node that could not start is reported with its own output, not what others wrote to node.log', async () => {
  const init = JSON.parse((await cairn(['init', '--data-dir', dir, '--json'])).stdout) as { token: string };
  // Another node (or another bridge's) writing to the shared log while this bridge's node starts.
  const log = join(dir, 'node.log');
  const other = setInterval(() => appendFileSync(log, 'cairn serve: a line of another node\n'), 5);
  try {
    const r = await cairn(['mcp', '--data-dir', dir], { CAIRN_TOKEN: init.token, CAIRN_PORT: 'x' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the node did not start: CAIRN_PORT must be a port number');
    expect(r.stderr).toContain(`run \`cairn serve --data-dir ${dir}\` to see why`);
    expect(r.stderr).not.toContain('another node');
  } finally {
    clearInterval(other);
  }
  // It said so in node.log too.
  expect(readFileSync(log, 'utf8')).toContain('cairn serve: CAIRN_PORT must be a port number');
});
