import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The CLI as users run it: the built `dist/cli/main.js`. */
export const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const exec = promisify(execFile);

/**
 * Runs `cairn ...args` in its own process (in the directory `cwd`, else this one); its exit code
 * and output, whether it succeeded or not.
 */
export async function cairn(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, cwd });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * The command that runs `cairn ...args` as a user whom file modes stop: root runs it without the
 * capabilities that override them (`setpriv`), anyone else as is.
 */
export function asUserCommand(args: string[]): [string, string[]] {
  const argv = [CLI, ...args];
  return process.getuid?.() === 0
    ? ['setpriv', ['--bounding-set=-dac_override,-dac_read_search', '--', process.execPath, ...argv]]
    : [process.execPath, argv];
}

/**
 * This environment for an `npx` a test runs, without what an enclosing `npm exec` (e.g.
 * `npm run test:node22`) leaves for its own command: inherited, its `call` and `package` would
 * become this npx's and refuse its arguments.
 */
export const npxEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !/^npm_config_(call|package)$/i.test(k)),
) as NodeJS.ProcessEnv;

/**
 * A `--import` preload that makes a Node report `version` as `process.versions.node`, so the CLI
 * can be checked as another release would run it.
 */
export const reportingVersion = (version: string): string =>
  `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`;

/** A fresh temporary directory and a function that removes it. */
export async function tempDir(label: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `cairn-${label}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Awaits `promise` and returns what it rejected with (failing when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

/** Runs `fn` and returns what it threw (failing when it returns). */
export function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

/** A 16-byte big-endian key for `n`, so numeric order is key order. */
export function key16(n: number): Buffer {
  const k = Buffer.alloc(16);
  k.writeBigUInt64BE(BigInt(n), 8);
  return k;
}
