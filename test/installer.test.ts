import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { expect, it } from 'vitest';

import { reportingVersion } from './helpers.js';

// installer/install.sh: what it would do, shown by --dry-run, which changes nothing and needs no
// root; and its refusals, which come before any step.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = join(ROOT, 'installer', 'install.sh');
const APP_SCRIPT = join(ROOT, 'installer', 'install-app.sh');
const ENV_SCRIPT = join(ROOT, 'installer', 'env-file.sh');

async function install(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [SCRIPT, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

it('--dry-run prints every step of the service install and changes nothing', async () => {
  // Beside the checkout, which sits on the machine's real disk (ext4 here).
  const data = join(ROOT, '.installer-test', 'data');
  const r = await install(['--dry-run', '--data-dir', data, '--prefix', '/opt/cairn-test', '--port', '4711']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/data dir .* is on (ext4|xfs)/);
  expect(r.stdout).toContain('would run: useradd --system');
  expect(r.stdout).toContain(`would run: chmod 0700 ${data}`);
  expect(r.stdout).toMatch(/would write \/etc\/cairn\/cairn\.env \(mode 0600, owner root:root\)/);
  expect(r.stdout).toContain('| CAIRN_PORT=4711');
  expect(r.stdout).toContain('| User=cairn');
  expect(r.stdout).toContain('| EnvironmentFile=/etc/cairn/cairn.env');
  expect(r.stdout).toMatch(/\| ExecStart=\S+ \/opt\/cairn-test\/dist\/cli\/main\.js serve/);
  expect(r.stdout).toContain(`| ReadWritePaths=${data}`);
  expect(r.stdout).toContain('would run: systemctl enable --now cairn.service');
  expect(r.stdout).toContain('dry run: nothing was changed');
  expect(r.stdout).not.toMatch(/CAIRN_ADMIN_TOKEN=cairn_[A-Za-z0-9_-]{20,}/);
  expect(existsSync(join(ROOT, '.installer-test'))).toBe(false);
  expect(existsSync('/opt/cairn-test')).toBe(false);
});

it('--help prints the usage on stdout and exits 0', async () => {
  const r = await install(['--help']);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('install.sh [--dry-run]');
});

it('refuses bad options as bad usage (exit 2, with the usage) before any step', async () => {
  for (const [args, message] of [
    [['--dry-run', '--port', '70000'], '--port must be 1-65535'],
    [['--dry-run', '--data-dir', 'relative/dir'], 'must be absolute paths'],
    // The env file's CAIRN_DATA_DIR is never empty (an empty one is refused by the node).
    [['--dry-run', '--data-dir', ''], '--data-dir needs a path'],
    [['--dry-run', '--user', 'Bad User'], 'plain user name'],
    [['--dry-run', '--frobnicate'], 'unknown option'],
    // A dedicated user, never root (DESIGN.md §4).
    [['--dry-run', '--user', 'root'], '--user root is root'],
    // A host is written into the env file: nothing the node would fail to listen on.
    [['--dry-run', '--host', 'a b'], "--host must be an address or host name to listen on, got 'a b'"],
    [['--dry-run', '--host', ''], '--host needs an address'],
    [['--dry-run', '--host'], '--host needs an address'],
  ] as const) {
    const r = await install([...args]);
    expect(r.code, args.join(' ')).toBe(2);
    expect(r.stderr).toMatch(/^install\.sh: /);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('install.sh [--dry-run]');
    expect(r.stdout).not.toContain('[1]');
  }
  const v6 = await install(['--dry-run', '--host', '::1', '--data-dir', join(ROOT, '.installer-test', 'data')]);
  expect(v6.code, v6.stderr).toBe(0);
  expect(v6.stdout).toContain('| CAIRN_HOST=::1');
});

it('refuses a data dir that already holds a store when no admin token for it is kept', async () => {
  // A new CAIRN_ADMIN_TOKEN only seeds an empty store: printing one for a store with tokens would lie.
  const data = join(ROOT, '.installer-test-store');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'data.cairn'), 'a store');
  try {
    const r = await install(['--dry-run', '--data-dir', data]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('already holds a store');
    expect(r.stdout).not.toContain('dry run: nothing was changed');
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});

it('copies a Node.js that lives under a home directory (nvm, volta, npx node@22) into the prefix for the service', async () => {
  // The unit's ProtectHome hides homes from the service: a node there would never start it.
  const home = homedir();
  expect(home, 'this test puts a node under the home directory').toMatch(/^\/(home|root)(\/|$)/);
  const bin = mkdtempSync(join(home, '.cairn-installer-test-'));
  // A link, as version managers leave: the installer copies the executable it points to.
  symlinkSync(process.execPath, join(bin, 'node'));
  try {
    const data = join(ROOT, '.installer-test', 'data');
    const args = ['--dry-run', '--data-dir', data, '--prefix', '/opt/cairn-test'];
    const r = await install(args, { ...process.env, PATH: `${bin}:${process.env.PATH}` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `node ${process.execPath} (v${process.versions.node}, under a home directory: copied to`,
    );
    expect(r.stdout).toContain(`would run: install -D -m 0755 ${process.execPath} /opt/cairn-test.new/bin/node`);
    expect(r.stdout).toContain('| ExecStart=/opt/cairn-test/bin/node /opt/cairn-test/dist/cli/main.js serve');
    expect(existsSync('/opt/cairn-test')).toBe(false);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

/** A `systemctl` that answers `is-active` as a unit that is running (`active`) or not, and refuses anything else. */
function fakeSystemctl(active: boolean): { bin: string; remove: () => void } {
  const bin = mkdtempSync(join(ROOT, '.installer-test-bin-'));
  writeFileSync(
    join(bin, 'systemctl'),
    `#!/bin/sh\n[ "$1" = is-active ] && exit ${active ? 0 : 3}\necho "systemctl $* must not run in a dry run" >&2\nexit 1\n`,
    { mode: 0o755 },
  );
  return { bin, remove: () => rmSync(bin, { recursive: true, force: true }) };
}

it('run again over a running service, it restarts the service on the new files (an upgrade), shown by --dry-run', async () => {
  const data = join(ROOT, '.installer-test', 'data');
  for (const active of [true, false]) {
    const fake = fakeSystemctl(active);
    try {
      const r = await install(['--dry-run', '--data-dir', data, '--prefix', '/opt/cairn-test'], {
        ...process.env,
        PATH: `${fake.bin}:${process.env.PATH}`,
      });
      expect(r.code, r.stderr).toBe(0);
      const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      expect(r.stdout).toContain(`then waits for http://127.0.0.1:4000/health to answer as version ${version}`);
      if (active) {
        expect(r.stdout).toContain('cairn.service is running: an upgrade');
        // `enable --now` leaves an active unit as it is: the old process would go on serving the old code.
        expect(r.stdout).toMatch(
          /restart the running service on the new files\n {4}would run: systemctl daemon-reload\n {4}would run: systemctl enable cairn\.service\n {4}would run: systemctl restart cairn\.service\n/,
        );
        expect(r.stdout).not.toContain('enable --now');
        // After the new files are copied.
        expect(r.stdout.indexOf('restart cairn.service')).toBeGreaterThan(r.stdout.indexOf('would run: cp -a'));
      } else {
        expect(r.stdout).toContain('would run: systemctl enable --now cairn.service');
        expect(r.stdout).not.toContain('systemctl restart');
      }
    } finally {
      fake.remove();
    }
  }
  expect(existsSync('/opt/cairn-test')).toBe(false);
});

it('the SUCCESS banner shows how to make agent tokens without putting the admin token on a command line', async () => {
  const data = join(ROOT, '.installer-test', 'data');
  const r = await install(['--dry-run', '--data-dir', data, '--prefix', '/opt/cairn-test', '--user', 'cairnsvc']);
  expect(r.code, r.stderr).toBe(0);
  const banner = r.stdout.slice(r.stdout.indexOf('then prints:'));
  expect(banner).toContain('| SUCCESS: Cairn runs as the systemd service cairn');
  const make = banner.split('\n').find((l) => l.includes('make agent tokens:')) ?? '';
  // Root reads the env file (0600, root's) and runs the CLI as the service user with its settings.
  expect(make).toMatch(
    /sudo sh -c 'set -a; \. \/etc\/cairn\/cairn\.env; exec runuser -u cairnsvc -- \S+ \/opt\/cairn-test\/dist\/cli\/main\.js token create --agent NAME'$/,
  );
  expect(make).not.toContain('CAIRN_ADMIN_TOKEN');
  expect(banner).not.toMatch(/env CAIRN_ADMIN_TOKEN=/);
  expect(banner).toContain('upgrade:');
});

/** A built checkout in miniature: what the app step copies, `dist/old.js` among it. */
function fakeRelease(root: string): string {
  const src = join(root, 'src');
  for (const [file, body] of [
    ['package.json', '{ "name": "cairn", "version": "0.0.1" }'],
    ['package-lock.json', '{}'],
    ['dist/cli/main.js', 'new main'],
    ['dist/old.js', 'a module the next release drops'],
    ['dist/native/.keep', ''],
    ['docs/operations.md', 'docs'],
    ['node_modules/dep/index.js', 'dep'],
    ['ts/native/cairn.linux-x64-gnu.node', 'engine'],
  ] as const) {
    mkdirSync(join(src, file, '..'), { recursive: true });
    writeFileSync(join(src, file), body);
  }
  return src;
}

/** Every file under `dir`, relative to it, sorted. */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

it('an upgrade leaves the prefix holding exactly the new release: a file dropped upstream is gone, and a failed copy keeps the old install', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cairn-install-app-'));
  // The app step for real (no root needed: the owner is this user); `npm prune` is a stand-in
  // that fails on demand, as a copy that breaks part-way would.
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'npm'), '#!/bin/sh\n[ -z "$FAIL_NPM" ] || exit 1\n', { mode: 0o755 });
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
  const owner = `${process.getuid?.()}:${process.getgid?.()}`;
  const run = async (src: string, prefix: string, extra: NodeJS.ProcessEnv = {}) => {
    try {
      await promisify(execFile)('bash', [APP_SCRIPT, src, prefix, owner], { env: { ...env, ...extra } });
      return 0;
    } catch (err) {
      return (err as { code: number }).code;
    }
  };
  try {
    const src = fakeRelease(root);
    const prefix = join(root, 'opt', 'cairn');
    expect(await run(src, prefix)).toBe(0);
    expect(existsSync(join(prefix, 'dist', 'old.js'))).toBe(true);
    // The next release drops old.js and changes main.js.
    rmSync(join(src, 'dist', 'old.js'));
    writeFileSync(join(src, 'dist', 'cli', 'main.js'), 'newer main');
    expect(await run(src, prefix)).toBe(0);
    expect(tree(prefix)).toEqual(
      [...tree(src).filter((f) => !f.startsWith('ts/')), 'dist/native/cairn.linux-x64-gnu.node'].sort(),
    );
    expect(existsSync(join(prefix, 'dist', 'old.js'))).toBe(false);
    expect(readFileSync(join(prefix, 'dist', 'cli', 'main.js'), 'utf8')).toBe('newer main');
    expect(readdirSync(join(root, 'opt'))).toEqual(['cairn']);
    // A run that fails part-way leaves the working install as it was, and nothing beside it
    // once a later run succeeds.
    const before = tree(prefix);
    writeFileSync(join(src, 'dist', 'cli', 'main.js'), 'a release that fails to install');
    expect(await run(src, prefix, { FAIL_NPM: '1' })).not.toBe(0);
    expect(tree(prefix)).toEqual(before);
    expect(readFileSync(join(prefix, 'dist', 'cli', 'main.js'), 'utf8')).toBe('newer main');
    expect(await run(src, prefix)).toBe(0);
    expect(readdirSync(join(root, 'opt'))).toEqual(['cairn']);
    // A prefix holding something else is refused, not replaced.
    const other = join(root, 'usr-local');
    mkdirSync(join(other, 'bin'), { recursive: true });
    writeFileSync(join(other, 'bin', 'tool'), 'not ours');
    expect(await run(src, other)).toBe(1);
    expect(tree(other)).toEqual(['bin/tool']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it('refuses a Node.js the build does not run on (22 before 22.13), before any step', async () => {
  // A `node` that reports 22.0.0, on which every PDF document failed: the rule is the build's own.
  const bin = mkdtempSync(join(tmpdir(), 'cairn-installer-node-'));
  writeFileSync(
    join(bin, 'node'),
    `#!/bin/sh\nexec '${process.execPath}' --import "${reportingVersion('22.0.0')}" "$@"\n`,
    { mode: 0o755 },
  );
  try {
    const data = join(ROOT, '.installer-test', 'data');
    const r = await install(['--dry-run', '--data-dir', data], { ...process.env, PATH: `${bin}:${process.env.PATH}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'Node.js 22.0.0 is not supported: Cairn needs Node.js 20.19 or a later 20, or 22.13 or later',
    );
    expect(r.stdout).not.toContain('dry run: nothing was changed');
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

// Found by operator QA: an upgrade (install.sh run again) rewrote /etc/cairn/cairn.env from its
// four settings alone, so whatever the operator had set there (a rate limit, the team profile,
// extra allowed hosts) was gone, and the restarted node ran on its defaults without a word.
it("the env file of an upgrade keeps the lines an operator added, and takes this run's data dir, host and port", async () => {
  const root = mkdtempSync(join(tmpdir(), 'cairn-env-file-'));
  try {
    const old = join(root, 'cairn.env');
    writeFileSync(
      old,
      [
        'CAIRN_ADMIN_TOKEN=cairn_old-token-kept-by-install-sh-0123456789',
        'CAIRN_DATA_DIR=/var/lib/cairn',
        'CAIRN_HOST=127.0.0.1',
        'CAIRN_PORT=4000',
        '# raised for the team',
        'CAIRN_RATE_LIMIT=600',
        'export CAIRN_PORT=4001',
        'CAIRN_PROFILE=team',
        '',
      ].join('\n'),
    );
    const args = [old, 'cairn_kept', '/srv/cairn', '0.0.0.0', '4711'];
    const { stdout } = await promisify(execFile)('bash', [ENV_SCRIPT, ...args]);
    expect(stdout.split('\n')).toEqual([
      'CAIRN_ADMIN_TOKEN=cairn_kept',
      'CAIRN_DATA_DIR=/srv/cairn',
      'CAIRN_HOST=0.0.0.0',
      'CAIRN_PORT=4711',
      '# raised for the team',
      'CAIRN_RATE_LIMIT=600',
      'CAIRN_PROFILE=team',
      '',
    ]);
    // A first install: the four settings alone.
    const first = await promisify(execFile)('bash', [ENV_SCRIPT, join(root, 'none'), 'cairn_new', '/d', 'h', '1']);
    expect(first.stdout).toBe('CAIRN_ADMIN_TOKEN=cairn_new\nCAIRN_DATA_DIR=/d\nCAIRN_HOST=h\nCAIRN_PORT=1\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
