import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterEach, beforeEach, expect, it } from 'vitest';

import { CLI, cairn, tempDir } from './helpers.js';
import { ADMIN, startTestNode } from './node.js';

// What an operator meets running Cairn: private store files, refused profiles and settings,
// the unlimited admin token that cannot be revoked last, and `cairn mcp` reporting a node that failed.

const exec = promisify(execFile);

let dir: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-ops'));
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await cleanup();
});

const mode = (path: string) => statSync(path).mode & 0o777;

it('init makes the data dir 0700 and every file in it 0600 under umask 022', async () => {
  const store = join(dir, 'store');
  expect(process.umask() & 0o077).toBe(0o022);
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  expect(mode(store)).toBe(0o700);
  for (const name of ['data.cairn', 'wal.cairn', 'LOCK']) expect(mode(join(store, name)), name).toBe(0o600);
});

it('an existing wider store: its files are tightened, the dir is left with a warning', async () => {
  const store = join(dir, 'store');
  mkdirSync(store, { mode: 0o755 });
  chmodSync(store, 0o755);
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  chmodSync(join(store, 'data.cairn'), 0o644);
  const again = await cairn(['init', '--data-dir', store]);
  expect(again.stderr).toContain(`chmod 700 ${store}`);
  expect(mode(join(store, 'data.cairn'))).toBe(0o600);
  expect(mode(store)).toBe(0o755);
});

it.each([
  ['--profile team', ['--profile', 'team'], {}, 'team profile'],
  ['CAIRN_PROFILE=team', [], { CAIRN_PROFILE: 'team' }, 'team profile'],
  ['--profile bogus', ['--profile', 'bogus'], {}, '--profile must be lite or team'],
  ['CAIRN_RATE_LIMIT=abc', [], { CAIRN_RATE_LIMIT: 'abc' }, 'CAIRN_RATE_LIMIT'],
  ['CAIRN_RATE_LIMIT=0', [], { CAIRN_RATE_LIMIT: '0' }, 'CAIRN_RATE_LIMIT'],
  ['CAIRN_RATE_LIMIT_PER_USER=0', [], { CAIRN_RATE_LIMIT_PER_USER: '0' }, 'CAIRN_RATE_LIMIT_PER_USER'],
  ['CAIRN_RATE_LIMIT_PER_USER=1.5', [], { CAIRN_RATE_LIMIT_PER_USER: '1.5' }, 'CAIRN_RATE_LIMIT_PER_USER'],
  [
    'CAIRN_DOCUMENT_READ_SECONDS=0',
    [],
    { CAIRN_DOCUMENT_READ_SECONDS: '0' },
    'CAIRN_DOCUMENT_READ_SECONDS must be a whole number of seconds a document may take to read, 1–3600, got "0"',
  ],
  [
    'CAIRN_IDEMPOTENCY_HOURS=0',
    [],
    { CAIRN_IDEMPOTENCY_HOURS: '0' },
    'CAIRN_IDEMPOTENCY_HOURS must be a whole number of hours a retried write is recognised, 1–8760, got "0"',
  ],
  [
    'CAIRN_NAME_CACHE_MB=-1',
    [],
    { CAIRN_NAME_CACHE_MB: '-1' },
    'CAIRN_NAME_CACHE_MB must be a whole number of MiB of name indexes kept between calls, 0–1048576, got "-1"',
  ],
  [
    'CAIRN_MCP_SESSIONS=0',
    [],
    { CAIRN_MCP_SESSIONS: '0' },
    'CAIRN_MCP_SESSIONS must be a whole number of MCP sessions the node holds at once, 1–100000, got "0"',
  ],
  [
    'CAIRN_MCP_SESSIONS_PER_USER=ten',
    [],
    { CAIRN_MCP_SESSIONS_PER_USER: 'ten' },
    'CAIRN_MCP_SESSIONS_PER_USER must be a whole number of MCP sessions the tokens of one user hold together',
  ],
  [
    'CAIRN_ADMIN_TOKEN=short',
    [],
    { CAIRN_ADMIN_TOKEN: 'short' },
    'CAIRN_ADMIN_TOKEN must be at least 32 characters, got 5',
  ],
  // Found by QA: taken as the admin token, though the node reads a bearer token up to the first
  // whitespace and HTTP trims a header's ends, so it could never authenticate.
  [
    'CAIRN_ADMIN_TOKEN with a trailing space',
    [],
    { CAIRN_ADMIN_TOKEN: 'cairn_0123456789abcdef0123456789abcdef ' },
    'CAIRN_ADMIN_TOKEN must hold no space or other whitespace',
  ],
  [
    'CAIRN_LOG_LEVEL=bogus',
    [],
    { CAIRN_LOG_LEVEL: 'bogus' },
    'CAIRN_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus"',
  ],
  [
    'CAIRN_DOCUMENT_READ_MB=1.5',
    [],
    { CAIRN_DOCUMENT_READ_MB: '1.5' },
    'CAIRN_DOCUMENT_READ_MB must be a whole number',
  ],
  // Found by a review: a URL was taken as a name and matched no Host header, so the clients it
  // was meant for got 403 with nothing saying why.
  [
    'CAIRN_ALLOWED_HOSTS holding a URL',
    [],
    { CAIRN_ALLOWED_HOSTS: 'a.lan:1, http://cairn.lan:4534/' },
    'CAIRN_ALLOWED_HOSTS: "http://cairn.lan:4534/" is not a host name as a Host header carries it: give host or ' +
      'host:port ("cairn.lan:4534"), comma-separated',
  ],
  [
    'CAIRN_LOAD_PIECE_BYTES=64MB',
    [],
    { CAIRN_LOAD_PIECE_BYTES: '64MB' },
    'CAIRN_LOAD_PIECE_BYTES must be a whole number of bytes one bulk load of an import takes, 1 or more, got "64MB"',
  ],
])('serve with %s refuses to start and touches nothing', async (_label, args, env, message) => {
  const store = join(dir, 'store');
  const r = await cairn(['serve', '--data-dir', store, '--port', '0', ...args], env);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(message);
  expect(existsSync(store)).toBe(false);
});

it.each([
  ['init', []],
  ['serve', ['--port', '0']],
])('%s with a data dir that cannot be made under /proc fails at once, not retrying for ever', async (cmd, args) => {
  // Killed after 10 s: without the fix the recursive mkdir spins on ENOENT for ever.
  const r = await exec(process.execPath, [CLI, cmd, ...args, '--data-dir', '/proc/cairn-no-such-dir'], {
    timeout: 10_000,
    killSignal: 'SIGKILL',
  }).then(
    () => ({ code: 0, killed: false, stderr: '' }),
    (e: { code: number; killed: boolean; stderr: string }) => e,
  );
  expect(r.killed).toBe(false);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('/proc/cairn-no-such-dir');
});

it('init with CAIRN_ADMIN_TOKEN=short refuses (exit 2) before the data dir is made', async () => {
  const store = join(dir, 'store');
  const r = await cairn(['init', '--data-dir', store], { CAIRN_ADMIN_TOKEN: 'short' });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('CAIRN_ADMIN_TOKEN: must be at least 32 characters, got 5');
  expect(existsSync(store)).toBe(false);
});

it('init with a CAIRN_ADMIN_TOKEN holding whitespace refuses (exit 2): no bearer header could carry it', async () => {
  const store = join(dir, 'store');
  const r = await cairn(['init', '--data-dir', store], { CAIRN_ADMIN_TOKEN: 'my admin token is this long passphrase' });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('CAIRN_ADMIN_TOKEN: must hold no space or other whitespace');
  expect(existsSync(store)).toBe(false);
});

it.each([
  ['CAIRN_HOST= (empty)', ['--port', '0'], { CAIRN_HOST: '' }, 'CAIRN_HOST must name an address to listen on'],
  ['--host ""', ['--host', '', '--port', '0'], {}, '--host must name an address to listen on'],
  ['CAIRN_PORT= (empty)', [], { CAIRN_PORT: '' }, 'CAIRN_PORT must be a port number 0–65535'],
  ['CAIRN_PORT=" 12"', [], { CAIRN_PORT: ' 12' }, 'CAIRN_PORT must be a port number 0–65535'],
  ['--port 0x50', ['--port', '0x50'], {}, '--port must be a port number 0–65535 (0: any free port), got "0x50"'],
  ['--port 1e3', ['--port', '1e3'], {}, '--port must be a port number 0–65535'],
  ['--port 65536', ['--port', '65536'], {}, '--port must be a port number 0–65535'],
])('serve with %s refuses to listen, naming the setting, and touches nothing', async (_label, args, env, message) => {
  const store = join(dir, 'store');
  const r = await cairn(['serve', '--data-dir', store, ...args], env);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(message);
  expect(existsSync(store)).toBe(false);
});

it.each([
  ['CAIRN_DATA_DIR= (empty)', ['serve', '--port', '0'], { CAIRN_DATA_DIR: '' }, 'CAIRN_DATA_DIR: must name the store'],
  ['--data-dir ""', ['init', '--data-dir', ''], {}, '--data-dir: must name the store directory, got ""'],
  ['HOME= (empty), no data dir given', ['init'], { HOME: '', CAIRN_DATA_DIR: undefined }, 'HOME: must be an absolute'],
  [
    'HOME=relative, no data dir given',
    ['serve', '--port', '0'],
    { HOME: 'h', CAIRN_DATA_DIR: undefined },
    'HOME: must',
  ],
  // Found by a review: a "~" no shell expanded (`export CAIRN_DATA_DIR="~/.cairn"`, an env file,
  // `--data-dir=~/x`) made a store in a directory named "~" under the current one.
  [
    'CAIRN_DATA_DIR="~/.cairn" (not expanded)',
    ['serve', '--port', '0'],
    { CAIRN_DATA_DIR: '~/.cairn' },
    'CAIRN_DATA_DIR: "~/.cairn" starts with a "~" no shell expanded',
  ],
  ['--data-dir=~/x', ['init', '--data-dir=~/x'], {}, '--data-dir: "~/x" starts with a "~" no shell expanded'],
])('%s is refused, naming it, and nothing is made in the current directory', async (_label, args, env, message) => {
  const cwd = join(dir, 'cwd');
  mkdirSync(cwd);
  const r = await cairn(args, env, cwd);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(message);
  expect(readdirSync(cwd)).toEqual([]);
  const json = await cairn(['token', 'list', '--json', ...args.slice(1)], env, cwd);
  expect(json.code).toBe(2);
  expect(JSON.parse(json.stdout).error).toMatchObject({
    code: 'VALIDATION_ERROR',
    details: [{ field: expect.any(String) }],
  });
  expect(readdirSync(cwd)).toEqual([]);
});

it('serve --profile lite (and CAIRN_PROFILE=lite) starts; /health reports the profile', async () => {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dir, '--port', '0', '--profile', 'lite'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', CAIRN_PROFILE: 'lite', CAIRN_RATE_LIMIT: '50' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let url: string | undefined;
  for (let i = 0; i < 100 && url === undefined; i++) {
    if (existsSync(join(dir, 'node.json')))
      url = (JSON.parse(readFileSync(join(dir, 'node.json'), 'utf8')) as { url: string }).url;
    else await new Promise((r) => setTimeout(r, 100));
  }
  expect(url).toBeDefined();
  expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok', profile: 'lite' });
  expect(mode(join(dir, 'node.json'))).toBe(0o600);
});

it('the last unlimited admin token cannot be revoked, a limited admin beside it or not', async () => {
  const init = await cairn(['init', '--data-dir', dir, '--json']);
  const list = async () =>
    (
      JSON.parse((await cairn(['token', 'list', '--data-dir', dir, '--json'])).stdout) as {
        tokens: { id: string; role: string; revokedAt?: string }[];
      }
    ).tokens;
  expect(init.code).toBe(0);
  const [first] = await list();
  const refused = await cairn(['token', 'revoke', first?.id ?? '', '--data-dir', dir]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('last admin token with neither a user nor a scope limit');
  expect((await list())[0]?.revokedAt).toBeUndefined();
  const admin = async (...limits: string[]) => {
    const made = await cairn(['token', 'create', '--agent', 'ops', '--role', 'admin', ...limits, '--data-dir', dir]);
    expect(made.code, made.stderr).toBe(0);
  };
  // Admins limited to a scope or a user cannot do the store-wide admin work, so they do not count.
  await admin('--scope', 'a');
  await admin('--user', 'ann');
  const still = await cairn(['token', 'revoke', first?.id ?? '', '--data-dir', dir, '--json']);
  expect(still.code).toBe(1);
  expect(JSON.parse(still.stdout).error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'id' }] });
  expect((await list())[0]?.revokedAt).toBeUndefined();
  await admin();
  expect((await cairn(['token', 'revoke', first?.id ?? '', '--data-dir', dir])).code).toBe(0);
});

it('over HTTP the last unlimited admin token is refused with VALIDATION_ERROR naming id', async () => {
  const t = await startTestNode();
  try {
    await t.token({ agent: 'scoped-admin', role: 'admin', scopes: ['a'] });
    const tokens = (await t.call('GET', '/v1/admin/tokens')).body.tokens as { id: string; agent: string }[];
    const admin = tokens.find((x) => x.agent !== 'scoped-admin');
    const r = await t.call('DELETE', `/v1/admin/tokens/${admin?.id}`);
    expect(r.status).toBe(422);
    expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'id' }] });
    expect((await t.call('GET', '/v1/whoami', { token: ADMIN })).status).toBe(200);
    const made = await t.call('POST', '/v1/admin/tokens', { body: { agent: 'agent-x' } });
    expect((await t.call('DELETE', `/v1/admin/tokens/${made.body.id}`)).status).toBe(200);
  } finally {
    await t.stop();
  }
});

it('cairn mcp reports at once a background node that failed (port in use), and its log is private', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  expect((await cairn(['init', '--data-dir', dir])).code).toBe(0);
  try {
    const started = Date.now();
    const r = await cairn(['mcp', '--data-dir', dir], { CAIRN_TOKEN: 'x', CAIRN_PORT: String(port) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('EADDRINUSE');
    expect(r.stderr).toContain(String(port));
    expect(r.stderr).toContain('choose another --port');
    expect(Date.now() - started).toBeLessThan(8000);
    expect(mode(join(dir, 'node.log'))).toBe(0o600);
  } finally {
    blocker.close();
  }
});

it('the help names this CLI by absolute path for a client config, never npx', async () => {
  const r = await cairn(['--help']);
  expect(r.stdout).toContain(`"args": ["${CLI}", "mcp"]`);
  expect(r.stdout).toContain(`"command": "${process.execPath}"`);
  expect(r.stdout).not.toMatch(/"npx"|npx cairn/);
});

it('--version, -V and `cairn version` print the package version; --json as {"version"}', async () => {
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  for (const args of [['--version'], ['-V'], ['version']]) {
    const r = await cairn(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`cairn ${version}\n`);
  }
  const r = await cairn(['--version', '--json']);
  expect(JSON.parse(r.stdout)).toEqual({ version });
  // A bare `cairn` still shows the help and says it was not run.
  expect((await cairn([])).code).toBe(2);
});

/** Starts `cairn serve` on `store` (any free port) and waits until it says it is serving; its stderr so far. */
async function serveUntilServing(store: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', store, '--port', '0'], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  for (let i = 0; i < 100 && !stderr.includes('serving'); i++) await new Promise((r) => setTimeout(r, 100));
  return stderr;
}

it('a data dir this user may not read is said as such, with what to do, not as "no store … run cairn init"', async () => {
  const store = join(dir, 'store');
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  // As a user the data dir shuts out, as an operator meets the service's 0700 data dir: the dir is
  // made unreadable, and root, whom permissions do not stop, runs without the capabilities that
  // override them. (Dropping to another user instead needs every directory above the checkout to
  // let that user in, which a clone under a 0700 temporary directory does not.)
  const asOther = async (args: string[]) => {
    const argv = [CLI, ...args];
    const [file, all] =
      process.getuid?.() === 0
        ? ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, ...argv]]
        : [process.execPath, argv];
    chmodSync(store, 0o000);
    try {
      await exec(file, all, { env: { ...process.env, CAIRN_ADMIN_TOKEN: ADMIN } });
      return { code: 0, stdout: '', stderr: '' };
    } catch (err) {
      return err as { code: number; stdout: string; stderr: string };
    } finally {
      chmodSync(store, 0o700);
    }
  };
  const list = await asOther(['token', 'list', '--data-dir', store, '--json']);
  expect(list.code).toBe(1);
  const refusal = JSON.parse(list.stdout) as { error: { code: string; message: string } };
  expect(refusal.error.code).toBe('FORBIDDEN');
  expect(refusal.error.message).toContain('permission denied');
  expect(refusal.error.message).toContain('sudo');
  const doctor = await asOther(['doctor', '--data-dir', store]);
  expect(doctor.stdout).toContain('permission denied');
  expect(doctor.stdout).not.toContain('cairn init');
});

it('a first start that fails on a port in use shows no admin token; the next start shows the one it makes', async () => {
  const store = join(dir, 'store');
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const taken = await cairn(['serve', '--data-dir', store, '--port', String(port)], { CAIRN_LOG_LEVEL: 'silent' });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('EADDRINUSE');
    expect(taken.stderr).not.toContain('admin token');
  } finally {
    blocker.close();
  }
  const stderr = await serveUntilServing(store);
  const token = /admin token \(shown once, keep it\): (cairn_\S+)/.exec(stderr)?.[1];
  expect(token, stderr).toBeDefined();
  const { url } = JSON.parse(readFileSync(join(store, 'node.json'), 'utf8')) as { url: string };
  const who = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } });
  expect(who.status).toBe(200);
});

it('a first start that fails on a port in use leaves no store, nor the directories it made', async () => {
  const made = join(dir, 'new', 'nested', 'store');
  const chosen = join(dir, 'chosen');
  mkdirSync(chosen);
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    for (const store of [made, chosen]) {
      const taken = await cairn(['serve', '--data-dir', store, '--port', String(port)], { CAIRN_LOG_LEVEL: 'silent' });
      expect(taken.code, store).toBe(2);
      expect(taken.stderr).toContain('choose another --port');
    }
  } finally {
    blocker.close();
  }
  // Found by a review: the refused start left an empty store (data.cairn, wal.cairn, LOCK) there.
  expect(existsSync(join(dir, 'new'))).toBe(false);
  // A directory the operator made stays, as it was.
  expect(readdirSync(chosen)).toEqual([]);
  // A store that was there is left whole.
  expect((await cairn(['init', '--data-dir', chosen])).code).toBe(0);
  const blocker2 = createServer();
  await new Promise<void>((r) => blocker2.listen(0, '127.0.0.1', r));
  try {
    const port2 = String((blocker2.address() as { port: number }).port);
    expect((await cairn(['serve', '--data-dir', chosen, '--port', port2], { CAIRN_LOG_LEVEL: 'silent' })).code).toBe(2);
  } finally {
    blocker2.close();
  }
  expect((await cairn(['token', 'list', '--data-dir', chosen, '--json'])).code).toBe(0);
});

it('serve warns when CAIRN_ADMIN_TOKEN is not an admin token of a store that has tokens', async () => {
  const store = join(dir, 'store');
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  const stderr = await serveUntilServing(store, { CAIRN_ADMIN_TOKEN: 'rotated-in-the-env-file-0123456789abcdef' });
  expect(stderr).toContain('CAIRN_ADMIN_TOKEN is not an admin token of this store');
  expect(stderr).toContain('token create');
});

it('cairn COMMAND --help shows that command’s usage, not every command’s', async () => {
  const r = await cairn(['token', '--help']);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('cairn token create --agent NAME');
  expect(r.stdout).toContain('cairn token revoke ID');
  expect(r.stdout).toContain('--data-dir DIR');
  expect(r.stdout).not.toContain('cairn serve');
  const db = await cairn(['database', 'restore', '--help']);
  expect(db.stdout).toContain('cairn database restore SRC');
  expect(db.stdout).not.toContain('cairn token');
  // `cairn help COMMAND` is the same question (it printed every command's usage).
  const asked = await cairn(['help', 'token']);
  expect([asked.code, asked.stdout]).toEqual([0, r.stdout]);
  expect(r.stdout).toContain('cairn token revoke ID [--json]');
});

it('a command’s --help lists its every subcommand and only the options it honours', async () => {
  for (const args of [
    ['database', '--help'],
    ['database', 'backup', '--help'],
  ]) {
    const r = await cairn(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('cairn database check');
    expect(r.stdout).toContain('cairn database compact');
    expect(r.stdout).toContain('--data-dir DIR');
    expect(r.stdout).toMatch(/^ {2}--json /m);
  }
  // serve reads the data dir but prints no JSON; demo and openapi use no store and print no JSON.
  const serve = await cairn(['serve', '--help']);
  expect(serve.stdout).toContain('--data-dir DIR');
  expect(serve.stdout).not.toMatch(/^ {2}--json/m);
  for (const command of ['demo', 'openapi']) {
    const r = await cairn([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`cairn ${command}`);
    expect(r.stdout).not.toContain('--data-dir');
    expect(r.stdout).not.toMatch(/^ {2}--json/m);
  }
  const mcp = await cairn(['mcp', '--help']);
  expect(mcp.stdout).toContain('--data-dir DIR');
  expect(mcp.stdout).not.toMatch(/^ {2}--json/m);
  // The whole help says which commands ignore each.
  const all = await cairn(['--help']);
  expect(all.stdout).toMatch(/--data-dir DIR .*not demo, openapi/);
  expect(all.stdout).toContain('not serve, demo, mcp, openapi');
});

// Found by an audit: `--port 1 --port 2` served on port 2 and `--user a --user b` acted for b,
// the first value quietly dropped.
it('a single-value option given twice is bad usage, exit 2, naming it; --scope may repeat', async () => {
  const store = join(dir, 'store');
  const serve = await cairn(['serve', '--port', '1', '--port', '2', '--data-dir', store]);
  expect(serve.code).toBe(2);
  expect(serve.stderr).toMatch(/^cairn: serve: --port is given 2 times \("1", "2"\); give it once\n/);
  expect(existsSync(store)).toBe(false);
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  const token = await cairn([
    'token',
    'create',
    '--agent',
    'a',
    '--user',
    'ann',
    '--user=bob',
    '--data-dir',
    store,
    '--json',
  ]);
  expect(token.code).toBe(2);
  expect(JSON.parse(token.stdout)).toEqual({
    error: {
      code: 'VALIDATION_ERROR',
      message: 'token create: --user is given 2 times ("ann", "bob"); give it once',
      details: [{ field: '--user', message: 'given more than once' }],
    },
  });
  const listed = await cairn(['token', 'list', '--data-dir', store, '--json']);
  expect((JSON.parse(listed.stdout) as { tokens: unknown[] }).tokens).toHaveLength(1);
  // A repeatable option still repeats; a flag said twice still means one thing.
  const scoped = await cairn([
    'token',
    'create',
    '--agent',
    'a',
    '--scope',
    'x',
    '--scope',
    'y',
    '--json',
    '--json',
    '--data-dir',
    store,
  ]);
  expect(scoped.code, scoped.stderr).toBe(0);
  expect(JSON.parse(scoped.stdout)).toMatchObject({ agent: 'a', scopes: ['x', 'y'] });
});

it('an option a command does not honour is bad usage, exit 2, never taken and ignored', async () => {
  const store = join(dir, 'store');
  expect((await cairn(['init', '--data-dir', store])).code).toBe(0);
  // In a client's config `cairn mcp --user alice --scope work` served user default, scope default.
  const mcp = await cairn(['mcp', '--user', 'alice', '--scope', 'work', '--data-dir', store], { CAIRN_TOKEN: 'x' });
  expect(mcp.code).toBe(2);
  expect(mcp.stderr).toMatch(
    /^cairn: mcp: --user is not an option of this command \(set CAIRN_USER in its environment\)\n/,
  );
  expect(mcp.stderr).toContain('cairn mcp [--url URL]');
  expect(mcp.stderr).toContain('$CAIRN_USER, $CAIRN_SCOPE pick the user and scope');
  // `token list --user bob` listed every user's tokens.
  const list = await cairn(['token', 'list', '--user', 'bob', '--data-dir', store, '--json']);
  expect(list.code).toBe(2);
  expect(JSON.parse(list.stdout)).toEqual({
    error: {
      code: 'VALIDATION_ERROR',
      message: 'token list: --user is not an option of this command',
      details: [{ field: '--user', message: 'not an option of this command' }],
    },
  });
  // Refused before anything is done: no backup is made, no document printed.
  const dest = join(dir, 'copy');
  const backup = await cairn(['database', 'backup', dest, '--force', '--data-dir', store]);
  expect(backup.code).toBe(2);
  expect(backup.stderr).toContain('database backup: --force is not an option of this command');
  expect(existsSync(dest)).toBe(false);
  // A command with no JSON form is told in text.
  const openapi = await cairn(['openapi', '--json']);
  expect(openapi.code).toBe(2);
  expect(openapi.stdout).toBe('');
  expect(openapi.stderr).toContain('openapi: --json is not an option of this command');
  // The options a command honours still work.
  const made = await cairn(['token', 'create', '--agent', 'a', '--user', 'bob', '--data-dir', store, '--json']);
  expect(made.code, made.stderr).toBe(0);
  expect(JSON.parse(made.stdout)).toMatchObject({ agent: 'a', user: 'bob' });
  // Found by a review: `token list --json` left out the user, scopes and expiry a token has none
  // of, where `token create --json` says null; a script reading one read the other wrong.
  const open = JSON.parse((await cairn(['token', 'create', '--agent', 'b', '--data-dir', store, '--json'])).stdout);
  const listed = JSON.parse((await cairn(['token', 'list', '--data-dir', store, '--json'])).stdout) as {
    tokens: Record<string, unknown>[];
  };
  const entry = listed.tokens.find((t) => t.id === open.id);
  expect(entry).toMatchObject({ agent: 'b', user: null, scopes: null, expiresAt: null });
  expect(listed.tokens.find((t) => t.agent === 'a')).toMatchObject({ user: 'bob', scopes: null });
});

it('a mistyped option or one missing its value is said in the command’s terms, with its usage only', async () => {
  // Found by a review: Node's parser message ("To specify a positional argument starting with a
  // '-', place it … after '--'", a quote left open) and every command's help, 60 lines.
  const typo = await cairn(['serve', '--prot', '4001']);
  expect(typo.code).toBe(2);
  expect(typo.stderr).toMatch(/^cairn: serve: unknown option --prot \(did you mean --port\?\)\n/);
  expect(typo.stderr).toContain('cairn serve [--host H]');
  expect(typo.stderr).not.toContain('cairn token');
  expect(typo.stderr).not.toContain('positional');
  const json = await cairn(['token', 'list', '--jsno', '--json']);
  expect(json.code).toBe(2);
  expect(JSON.parse(json.stdout)).toEqual({
    error: {
      code: 'VALIDATION_ERROR',
      message: 'token list: unknown option --jsno (did you mean --json?)',
      details: [{ field: '--jsno', message: 'unknown option' }],
    },
  });
  // Nothing close: no guess.
  const far = await cairn(['check', '--frobnicate']);
  expect(far.stderr).toMatch(/^cairn: check: unknown option --frobnicate\n/);
  for (const [args, says] of [
    [['token', 'create', '--agent'], 'token create: --agent needs a value'],
    [['token', 'create', '--agent', '--user', 'bob'], 'token create: --agent needs a value'],
    [['token', 'create', '--agent', 'a', '--expires', '-5m'], 'token create: --expires needs a value'],
    [['check', '--json=yes'], 'check: --json takes no value'],
  ] as const) {
    const r = await cairn([...args]);
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.stderr, args.join(' ')).toMatch(new RegExp(`^cairn: ${says.replace(/[-]/g, '\\-')}`));
    expect(r.stderr).not.toContain('cairn openapi');
  }
  // A value that starts with "-" is still said how to give.
  const dash = await cairn(['token', 'create', '--agent', 'a', '--expires', '-5m']);
  expect(dash.stderr).toContain('--expires=-5m');
});

it('an argument past what a command takes is said as unexpected, exit 2, with that command’s usage', async () => {
  const r = await cairn(['memories', 'show', 'a', 'b']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^cairn: memories show: unexpected argument "b"\n/);
  expect(r.stderr).toContain('cairn memories show|history|forget KEY');
  expect(r.stderr).not.toContain('unknown command');
  expect(r.stderr).not.toContain('cairn token');
  const json = await cairn(['memories', 'show', 'a', 'b', '--json']);
  expect(json.code).toBe(2);
  expect(JSON.parse(json.stdout)).toEqual({
    error: {
      code: 'VALIDATION_ERROR',
      message: 'memories show: unexpected argument "b"',
      details: [{ field: 'b', message: 'unexpected argument' }],
    },
  });
  for (const [args, extra, usage] of [
    [['serve', 'now'], 'serve: unexpected argument "now"', 'cairn serve [--host H]'],
    [['export', 'a', 'b'], 'export: unexpected argument "b"', 'cairn export DIR'],
    [['token', 'list', 'x'], 'token list: unexpected argument "x"', 'cairn token list'],
    [['database', 'compact', 'x'], 'database compact: unexpected argument "x"', 'cairn database compact'],
  ] as const) {
    const bad = await cairn([...args]);
    expect(bad.code, args.join(' ')).toBe(2);
    expect(bad.stderr).toContain(extra);
    expect(bad.stderr).toContain(usage);
    expect(bad.stderr).not.toContain('cairn openapi');
  }
  // A command it does not know is still said as one.
  const unknown = await cairn(['frobnicate']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('unknown command "frobnicate"');
});

it('token create --scope a,b warns that it is one scope named with a comma; token list shows it unambiguously', async () => {
  const store = join(dir, 'commas');
  expect((await cairn(['init', '--data-dir', store, '--json'])).code).toBe(0);
  const create = ['token', 'create', '--data-dir', store];
  const made = await cairn([...create, '--agent', 'a', '--scope', 'work,personal', '--json']);
  expect(made.code, made.stderr).toBe(0);
  const { id, scopes } = JSON.parse(made.stdout) as { id: string; scopes: string[] };
  expect(scopes).toEqual(['work,personal']);
  expect(made.stderr).toContain('"work,personal" is one scope');
  expect(made.stderr).toContain(`cairn token revoke ${id}`);
  const two = await cairn([...create, '--agent', 'b', '--scope', 'work', '--scope', 'personal']);
  expect([two.code, two.stderr]).toEqual([0, '']);
  const list = (await cairn(['token', 'list', '--data-dir', store])).stdout;
  expect(list).toContain('agent=a  user=*  scopes=["work,personal"]');
  expect(list).toContain('agent=b  user=*  scopes=work,personal');
});
