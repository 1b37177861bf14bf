import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { Store } from '../ts/index.js';
import { CLI, cairn, tempDir } from './helpers.js';

// `cairn connect CLIENT` as users run it, with HOME (and XDG_CONFIG_HOME) in a temporary
// directory: the client's config gets an entry that reaches the node, a backup is taken first, and
// an existing entry is only replaced with --force.

let root: string;
let cleanup: () => Promise<void>;
let env: NodeJS.ProcessEnv;
let data: string;
const children: ChildProcess[] = [];
const ADMIN = 'cairn_connect-test-admin-token-0123456789abcdef';

beforeEach(async () => {
  ({ dir: root, cleanup } = await tempDir('cli-connect'));
  data = join(root, 'data');
  const home = join(root, 'home');
  env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), CODEX_HOME: join(home, '.codex') };
  mkdirSync(join(root, 'home'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const run = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
  cairn([...args, '--data-dir', data], { ...env, ...extra });

async function tokens(): Promise<{ agent: string }[]> {
  const r = await run(['token', 'list', '--json']);
  return (JSON.parse(r.stdout) as { tokens: { agent: string }[] }).tokens;
}

it('writes Claude Code an HTTP entry with its own token, keeping what the file held', async () => {
  expect((await run(['init'])).code).toBe(0);
  const file = join(root, 'home', '.claude.json');
  writeFileSync(file, JSON.stringify({ theme: 'dark', mcpServers: { other: { command: 'x' } } }), { mode: 0o644 });
  const r = await run(['connect', 'claude', '--json']);
  expect(r.code, r.stderr).toBe(0);
  const report = JSON.parse(r.stdout) as { backup: string; file: string; transport: string; tokenId: string };
  expect(report).toMatchObject({ file, transport: 'http', madePrivate: true, revokedTokenId: null });
  // It holds a token now: the file and its backup are the user's alone.
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(report.backup).mode & 0o777).toBe(0o600);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  expect(doc.theme).toBe('dark');
  expect(doc.mcpServers.other).toEqual({ command: 'x' });
  expect(doc.mcpServers.cairn).toMatchObject({ type: 'http', url: 'http://127.0.0.1:4000/v1/mcp' });
  expect(doc.mcpServers.cairn.headers.Authorization).toMatch(/^Bearer cairn_/);
  expect(JSON.parse(readFileSync(report.backup, 'utf8')).mcpServers).toEqual({ other: { command: 'x' } });
  expect((await tokens()).map((t) => t.agent)).toContain('claude');

  // Again: refused, nothing changed, no new token; with --force it is replaced.
  const before = readFileSync(file, 'utf8');
  const count = (await tokens()).length;
  const again = await run(['connect', 'claude']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('--force');
  expect(readFileSync(file, 'utf8')).toBe(before);
  expect((await tokens()).length).toBe(count);
  const forced = await run(['connect', 'claude', '--force', '--json']);
  expect(forced.code, forced.stderr).toBe(0);
  // The replaced entry's token is revoked: a reconnect leaves no live credential behind.
  expect(JSON.parse(forced.stdout)).toMatchObject({ revokedTokenId: report.tokenId });
  const listed = JSON.parse((await run(['token', 'list', '--json'])).stdout) as {
    tokens: { id: string; revokedAt?: string }[];
  };
  expect(listed.tokens.find((t) => t.id === report.tokenId)?.revokedAt).toEqual(expect.any(String));
  expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.cairn.headers).not.toEqual(doc.mcpServers.cairn.headers);
});

it('creates a new config readable by its owner only, and refuses a file that is not JSON', async () => {
  expect((await run(['init'])).code).toBe(0);
  const r = await run(['connect', 'cursor']);
  expect(r.code, r.stderr).toBe(0);
  const file = join(root, 'home', '.cursor', 'mcp.json');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.cairn.url).toBe('http://127.0.0.1:4000/v1/mcp');

  const broken = join(root, 'broken.json');
  writeFileSync(broken, '{ not json');
  const bad = await run(['connect', 'cursor', '--config', broken]);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('not valid JSON');
  expect(readFileSync(broken, 'utf8')).toBe('{ not json');
  const unknown = await run(['connect', 'emacs']);
  expect(unknown.code).toBe(2);
});

it('a config it cannot write fails (exit 1) and revokes the token it made for it', async () => {
  expect((await run(['init'])).code).toBe(0);
  const plain = join(root, 'home', 'file');
  writeFileSync(plain, '');
  const live = async () =>
    (JSON.parse((await run(['token', 'list', '--json'])).stdout) as { tokens: { revokedAt?: string }[] }).tokens.filter(
      (t) => t.revokedAt === undefined,
    ).length;
  const before = await live();
  const r = await run(['connect', 'trae', '--config', join(plain, 'sub', 'mcp.json'), '--json']);
  expect(r.code).toBe(1);
  const { error } = JSON.parse(r.stdout) as { error: { message: string } };
  expect(error.message).toContain('cannot write');
  expect(error.message).toContain('was revoked');
  expect(await live()).toBe(before);
});

// Found by QA: on a store with no token (one `cairn import` made in a new data dir) connect made an
// agent token, after which `init` was refused (the store has a token) and `serve` made no admin
// token, as `token create` refuses to do for the same reason.
it('refuses a store with no token (no admin would be left), making no token and writing no file', async () => {
  await (await Store.open(data)).close();
  const r = await run(['connect', 'claude', '--json']);
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({
    error: { code: 'NOT_FOUND', message: expect.stringContaining('run `cairn init` (or `cairn serve`) first') },
  });
  expect(existsSync(join(root, 'home', '.claude.json'))).toBe(false);
  expect(await tokens()).toEqual([]);
  expect((await run(['init'])).code).toBe(0);
  expect((await run(['connect', 'claude'])).code).toBe(0);
});

// Found by QA: a config kept as a symlink into a dotfiles repository was replaced by a file of
// its own (the rename went over the link), and the user's copy never got the entry.
it('writes a config kept as a symlink where the link points, and keeps the link', async () => {
  expect((await run(['init'])).code).toBe(0);
  const kept = join(root, 'home', 'dotfiles', 'mcp.json');
  mkdirSync(join(root, 'home', 'dotfiles'));
  mkdirSync(join(root, 'home', '.cursor'));
  writeFileSync(kept, JSON.stringify({ mcpServers: { other: { url: 'http://x' } } }));
  const link = join(root, 'home', '.cursor', 'mcp.json');
  symlinkSync(kept, link);
  const r = await run(['connect', 'cursor']);
  expect(r.code, r.stderr).toBe(0);
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  const doc = JSON.parse(readFileSync(kept, 'utf8'));
  expect(Object.keys(doc.mcpServers)).toEqual(['other', 'cairn']);
  expect(statSync(kept).mode & 0o777).toBe(0o600);
});

// Found by QA: an entry holding the admin token (pasted by hand, as the README's `claude mcp
// add-json` line allows) was replaced with --force and the admin token revoked; the last one
// failed the command after the config was written and a token made.
it('--force over an entry holding an admin token replaces it and leaves the admin token live', async () => {
  const admin = (JSON.parse((await run(['init', '--json'])).stdout) as { token: string }).token;
  const file = join(root, 'home', '.cursor', 'mcp.json');
  mkdirSync(join(root, 'home', '.cursor'));
  const by = { url: 'http://127.0.0.1:4000/v1/mcp', headers: { Authorization: `Bearer ${admin}` } };
  writeFileSync(file, JSON.stringify({ mcpServers: { cairn: by } }));
  const r = await run(['connect', 'cursor', '--force', '--json']);
  expect(r.code, r.stdout).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ revokedTokenId: null });
  expect(r.stderr).toMatch(/held admin token \w+, which is left live/);
  expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.cairn.headers.Authorization).not.toBe(
    by.headers.Authorization,
  );
  const listed = JSON.parse((await run(['token', 'list', '--json'])).stdout) as {
    tokens: { role: string; revokedAt?: string }[];
  };
  expect(listed.tokens.filter((t) => t.role === 'admin' && t.revokedAt === undefined)).toHaveLength(1);
});

it('adds a stdio table to Codex config.toml, keeping comments, and replaces it with --force', async () => {
  expect((await run(['init'])).code).toBe(0);
  const dir = join(root, 'home', '.codex');
  mkdirSync(dir);
  const file = join(dir, 'config.toml');
  writeFileSync(file, '# my settings\nmodel = "o4"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n');
  expect((await run(['connect', 'codex'])).code).toBe(0);
  const text = readFileSync(file, 'utf8');
  expect(text.startsWith('# my settings\nmodel = "o4"\n')).toBe(true);
  const doc = parseToml(text) as {
    mcp_servers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
  };
  expect(doc.mcp_servers.docs).toEqual({ command: 'docs-mcp' });
  const entry = doc.mcp_servers.cairn;
  expect(entry?.command).toBe(process.execPath);
  expect(entry?.args.slice(1)).toEqual(['mcp', '--data-dir', data]);
  expect(existsSync(entry?.args[0] ?? '')).toBe(true);
  expect(entry?.env.CAIRN_TOKEN).toMatch(/^cairn_/);

  expect((await run(['connect', 'codex'])).code).toBe(1);
  expect((await run(['connect', 'codex', '--force'])).code).toBe(0);
  const replaced = readFileSync(file, 'utf8');
  expect(replaced.match(/\[mcp_servers\."?cairn"?\]/g)).toHaveLength(1);
  const after = parseToml(replaced) as typeof doc;
  expect(after.mcp_servers.cairn?.env.CAIRN_TOKEN).not.toBe(entry?.env.CAIRN_TOKEN);
  expect(after.mcp_servers.docs).toEqual({ command: 'docs-mcp' });
  expect(readdirSync(dir).filter((f) => f.includes('cairn-backup'))).toHaveLength(2);
});

it('gives Claude Desktop a stdio entry that an MCP client can start and use, through a running node', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  // A missing or refused admin token is a failure (1), as for every command, not bad usage (2).
  for (const token of ['', 'cairn_wrong-admin-token-0123456789abcdef0000']) {
    const refused = await run(['connect', 'claude-desktop', '--json'], { CAIRN_ADMIN_TOKEN: token });
    expect(refused.code, token).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe('UNAUTHENTICATED');
  }
  const r = await run(['connect', 'claude-desktop'], { CAIRN_ADMIN_TOKEN: ADMIN });
  expect(r.code, r.stderr).toBe(0);
  const file = join(root, 'home', '.config', 'Claude', 'claude_desktop_config.json');
  const entry = JSON.parse(readFileSync(file, 'utf8')).mcpServers.cairn as {
    command: string;
    args: string[];
    env: Record<string, string>;
  };
  // Started the way the desktop client starts it: that command, those args, that env, nothing else.
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env: entry.env, cwd: root });
  const client = new Client({ name: 'desktop-test', version: '1' });
  await client.connect(transport);
  try {
    const who = await client.callTool({ name: 'memory_recall', arguments: { subject: 'Nobody Known' } });
    expect(who.isError).toBeFalsy();
    expect((who.structuredContent as { state: string }).state).toBe('nothing_stored');
  } finally {
    await client.close();
  }
});

it('--url makes the token at that node through its admin API, not in a local store', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const { url } = JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string };
  // The operator's own data dir: none (the service's is not theirs to read), or an old one.
  const stale = join(root, 'stale');
  expect((await cairn(['init', '--data-dir', stale], { CAIRN_ADMIN_TOKEN: '' })).code).toBe(0);
  const config = join(root, 'cursor.json');
  const whoami = async () => {
    const auth = JSON.parse(readFileSync(config, 'utf8')).mcpServers.cairn.headers.Authorization as string;
    return (await fetch(`${url}/v1/whoami`, { headers: { authorization: auth } })).status;
  };
  for (const dir of [join(root, 'none'), stale]) {
    const r = await cairn(['connect', 'cursor', '--url', url, '--config', config, '--force', '--data-dir', dir], {
      ...env,
      CAIRN_ADMIN_TOKEN: ADMIN,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await whoami(), dir).toBe(200);
  }
  expect(existsSync(join(root, 'none'))).toBe(false);
  const desktop = join(root, 'desktop.json');
  const stdio = await cairn(['connect', 'claude-desktop', '--url', url, '--config', desktop, '--data-dir', stale], {
    ...env,
    CAIRN_ADMIN_TOKEN: ADMIN,
  });
  expect(stdio.code, stdio.stderr).toBe(0);
  expect(JSON.parse(readFileSync(desktop, 'utf8')).mcpServers.cairn.args.slice(1)).toEqual(['mcp', '--url', url]);
  // No admin token for it: refused (1), the file as it was; a URL that is not one: bad usage (2).
  const before = readFileSync(config, 'utf8');
  const noToken = await cairn(['connect', 'cursor', '--url', url, '--config', config, '--force', '--data-dir', stale], {
    ...env,
    CAIRN_ADMIN_TOKEN: '',
  });
  expect(noToken.code).toBe(1);
  expect(readFileSync(config, 'utf8')).toBe(before);
  const bad = await cairn(
    ['connect', 'cursor', '--url', 'localhost:4000', '--config', config, '--data-dir', stale],
    env,
  );
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--url');
});

it('connect says a missing store as NOT_FOUND, and claims no running node for a --url nothing answers', async () => {
  const config = join(root, 'cursor.json');
  const none = await cairn(['connect', 'cursor', '--config', config, '--data-dir', join(root, 'none'), '--json'], env);
  expect(none.code).toBe(1);
  expect(JSON.parse(none.stdout).error).toMatchObject({
    code: 'NOT_FOUND',
    message: expect.stringContaining('no store at'),
  });
  // Without the admin token the CLI cannot know whether a node runs at --url: it asks for the token, no more.
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const url = `http://127.0.0.1:${closed}`;
  const r = await cairn(['connect', 'cursor', '--url', url, '--config', config, '--json'], {
    ...env,
    CAIRN_ADMIN_TOKEN: '',
  });
  expect(r.code).toBe(1);
  const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
  expect(error.code).toBe('UNAUTHENTICATED');
  expect(error.message).toBe(`set CAIRN_ADMIN_TOKEN to the admin token of the node at ${url}`);
  expect(existsSync(config)).toBe(false);
});

it('doctor says what is not ready, and is satisfied once a client is connected to a running node', async () => {
  const none = await run(['doctor', '--json']);
  expect(none.code).toBe(1);
  const first = JSON.parse(none.stdout) as { ok: boolean; findings: { check: string; state: string }[] };
  expect(first.findings.find((f) => f.check === 'store')?.state).toBe('problem');

  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_ADMIN_TOKEN: ADMIN },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const url = (JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string }).url;
  expect((await run(['connect', 'cursor', '--url', url], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  expect((await run(['connect', 'codex'], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  const ready = await run(['doctor', '--json']);
  expect(ready.code, ready.stdout).toBe(0);
  const states = Object.fromEntries(
    (JSON.parse(ready.stdout) as { findings: { check: string; state: string }[] }).findings.map((f) => [
      f.check,
      f.state,
    ]),
  );
  expect(states).toMatchObject({
    store: 'ok',
    node: 'ok',
    'client cursor': 'ok',
    'client codex': 'ok',
    'client claude': 'note',
  });
  // An HTTP entry is tried at its own URL: run for another data dir, the entry still works (found
  // by an audit: it was judged by that data dir's node, which does not run).
  const elsewhere = await cairn(['doctor', '--json', '--data-dir', join(root, 'elsewhere')], env);
  const cursor = (JSON.parse(elsewhere.stdout) as { findings: { check: string; state: string }[] }).findings.find(
    (f) => f.check === 'client cursor',
  );
  expect(cursor?.state, elsewhere.stdout).toBe('ok');

  // A revoked token is a problem the doctor names.
  const list = JSON.parse((await run(['token', 'list', '--json'], { CAIRN_ADMIN_TOKEN: ADMIN })).stdout) as {
    tokens: { id: string; agent: string }[];
  };
  for (const agent of ['cursor', 'codex']) {
    const id = list.tokens.find((t) => t.agent === agent)?.id ?? '';
    expect((await run(['token', 'revoke', id], { CAIRN_ADMIN_TOKEN: ADMIN })).code).toBe(0);
  }
  const broken = await run(['doctor']);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toMatch(/problem\s+client cursor: .*refuses its token/);
  expect(broken.stdout).toMatch(/problem\s+client codex: stdio: the node refuses its CAIRN_TOKEN/);
  expect(broken.stdout).toContain('`cairn connect codex --force` writes one that works');

  // With the node stopped, an HTTP client cannot connect: that is a problem, not a note.
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const down = await run(['doctor']);
  expect(down.code).toBe(1);
  expect(down.stdout).toMatch(/problem\s+client cursor: .*no node runs on this store/);
  // CAIRN_TOKEN only a node can judge: said as not tried, never left out of a report that says ready.
  const untried = await run(['doctor', '--json'], { CAIRN_TOKEN: 'cairn_revoked_or_not' });
  const finding = (
    JSON.parse(untried.stdout) as { findings: { check: string; state: string; detail: string }[] }
  ).findings.find((f) => f.check === 'CAIRN_TOKEN');
  expect(finding, untried.stdout).toMatchObject({ state: 'note' });
  expect(finding?.detail).toContain('not tried: no node runs');
});

// Found by QA: an entry written with `--name` was reported "no cairn server … (`cairn connect
// claude-desktop`)", and running that added a second server with a second token beside it.
it('doctor judges an entry connect wrote under --name, and names it in what to run', async () => {
  expect((await run(['init'])).code).toBe(0);
  const made = await run(['connect', 'claude-desktop', '--name', 'mem', '--json']);
  expect(made.code, made.stderr).toBe(0);
  const r = await run(['doctor', '--json']);
  const findings = (JSON.parse(r.stdout) as { findings: { check: string; state: string; detail: string }[] }).findings;
  expect(findings.find((f) => f.check === 'client claude-desktop (mem)')).toMatchObject({ state: 'ok' });
  expect(findings.some((f) => f.check === 'client claude-desktop')).toBe(false);

  const id = (JSON.parse(made.stdout) as { tokenId: string }).tokenId;
  expect((await run(['token', 'revoke', id])).code).toBe(0);
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, ...env, CAIRN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const broken = await run(['doctor']);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain('`cairn connect claude-desktop --name mem --force` writes one that works');
});

// Found by QA: an HTTP entry written while no node ran points at the default port; when the
// node then runs elsewhere, doctor said so but not what to run. What it says now works.
it("doctor says how to point an HTTP entry at the port this store's node runs on, and that works", async () => {
  const admin = (JSON.parse((await run(['init', '--json'])).stdout) as { token: string }).token;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  expect((await run(['connect', 'claude'], { CAIRN_PORT: String(port) })).code).toBe(0);
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, ...env, CAIRN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const off = await run(['doctor']);
  expect(off.stdout).toMatch(
    /problem\s+client claude: .*`cairn connect claude --force` \(CAIRN_ADMIN_TOKEN set\) points it there/,
  );
  expect((await run(['connect', 'claude', '--force'], { CAIRN_ADMIN_TOKEN: admin })).code).toBe(0);
  expect((await run(['doctor'])).stdout).toMatch(/ok\s+client claude: /);
});

// Found by QA: a stdio entry written with --url (the way to connect the installed service) was
// "ok … (its token is tried once a node runs)" with its token revoked at that node.
it("doctor tries a stdio entry's token at the node its --url names, and says how to replace a refused one", async () => {
  const admin = (JSON.parse((await run(['init', '--json'])).stdout) as { token: string }).token;
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, ...env, CAIRN_LOG_LEVEL: 'silent' },
    stdio: 'ignore',
  });
  children.push(child);
  for (let i = 0; i < 100 && !existsSync(join(data, 'node.json')); i++) await new Promise((r) => setTimeout(r, 100));
  const url = (JSON.parse(readFileSync(join(data, 'node.json'), 'utf8')) as { url: string }).url;
  const made = await run(['connect', 'claude-desktop', '--url', url, '--json'], { CAIRN_ADMIN_TOKEN: admin });
  expect(made.code, made.stdout).toBe(0);
  // Run for the user's own data dir, where no node runs: the entry's node is asked all the same.
  const doctor = () => cairn(['doctor', '--data-dir', join(root, 'mine')], env);
  expect((await doctor()).stdout).toMatch(/ok\s+client claude-desktop: stdio as agent claude-desktop/);
  const id = (JSON.parse(made.stdout) as { tokenId: string }).tokenId;
  expect((await run(['token', 'revoke', id], { CAIRN_ADMIN_TOKEN: admin })).code).toBe(0);
  const refused = await doctor();
  expect(refused.code).toBe(1);
  expect(refused.stdout).toContain(`\`cairn connect claude-desktop --url ${url} --force\``);
});

it('doctor names an option in a stdio entry that `cairn mcp` refuses, which the client shows only as a failed server', async () => {
  expect((await run(['init'])).code).toBe(0);
  expect((await run(['connect', 'claude-desktop'])).code).toBe(0);
  const config = join(root, 'home', '.config', 'Claude', 'claude_desktop_config.json');
  const written = JSON.parse(readFileSync(config, 'utf8'));
  expect((await run(['doctor'])).stdout).toMatch(/ok\s+client claude-desktop: stdio/);
  // By hand, as a user who reads `--scope` as the bridge's: `cairn mcp` refuses it (exit 2).
  written.mcpServers.cairn.args.push('--scope', 'work');
  writeFileSync(config, JSON.stringify(written));
  const r = await run(['doctor']);
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(
    /problem\s+client claude-desktop: its args hold --scope, which `cairn mcp` refuses \(set CAIRN_SCOPE in its env instead\)/,
  );
  expect(r.stdout).toContain('`cairn connect claude-desktop --force` writes one that works');
});

it('an empty XDG_CONFIG_HOME or CODEX_HOME counts as unset; an empty HOME is refused, never a file under the cwd', async () => {
  expect((await run(['init'])).code).toBe(0);
  const cwd = join(root, 'cwd');
  mkdirSync(cwd);
  const here = (args: string[], extra: NodeJS.ProcessEnv) =>
    cairn([...args, '--data-dir', data], { ...env, ...extra }, cwd);
  const desktop = await here(['connect', 'claude-desktop', '--json'], { XDG_CONFIG_HOME: '' });
  expect(desktop.code, desktop.stderr).toBe(0);
  const config = join(root, 'home', '.config', 'Claude', 'claude_desktop_config.json');
  expect(JSON.parse(desktop.stdout)).toMatchObject({ file: config });
  expect(JSON.parse(readFileSync(config, 'utf8')).mcpServers.cairn.env.CAIRN_TOKEN).toMatch(/^cairn_/);
  const codex = await here(['connect', 'codex', '--json'], { CODEX_HOME: '' });
  expect(codex.code, codex.stderr).toBe(0);
  expect(JSON.parse(codex.stdout)).toMatchObject({ file: join(root, 'home', '.codex', 'config.toml') });
  expect(readdirSync(cwd)).toEqual([]);

  // No home to find the file in: refused before a token is made; --config still works.
  const count = (await tokens()).length;
  for (const [client, extra, field] of [
    ['cursor', { HOME: '' }, 'HOME'],
    ['claude-desktop', { HOME: '', XDG_CONFIG_HOME: '' }, 'HOME'],
    ['codex', { CODEX_HOME: 'codex' }, 'CODEX_HOME'],
  ] as const) {
    const r = await here(['connect', client, '--json'], extra);
    expect(r.code, client).toBe(2);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field }] });
  }
  expect(readdirSync(cwd)).toEqual([]);
  expect((await tokens()).length).toBe(count);
  const chosen = join(root, 'chosen.json');
  expect((await here(['connect', 'cursor', '--config', chosen], { HOME: '' })).code).toBe(0);
  expect(existsSync(chosen)).toBe(true);

  // A config left under the cwd is not the client's: doctor names the missing home, not "ok".
  mkdirSync(join(cwd, '.cursor'));
  writeFileSync(join(cwd, '.cursor', 'mcp.json'), readFileSync(chosen));
  const doctor = await here(['doctor', '--json'], { HOME: '' });
  expect(doctor.code).toBe(1);
  const findings = (JSON.parse(doctor.stdout) as { findings: { check: string; state: string; detail: string }[] })
    .findings;
  expect(findings.find((f) => f.check === 'client cursor')).toMatchObject({ state: 'problem' });
  expect(findings.find((f) => f.check === 'client cursor')?.detail).toContain('HOME: must be an absolute path');
});
