import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { tempDir } from './helpers.js';

// Promises settled from engine threads come back through one completion channel per environment
// (bindings/src/completion.rs). It must keep the process alive exactly while a call is pending:
// a child that awaits its calls at top level would exit early (code 13, unsettled await) if a
// pending call did not hold the loop, and would never exit if an idle channel did.
const FIXTURE = fileURLToPath(new URL('./fixtures/settle.mjs', import.meta.url));

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('settle'));
});

afterEach(async () => {
  await cleanup();
});

async function run(mode: 'close' | 'open'): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const child = spawn(process.execPath, [FIXTURE, dir, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = await once(child, 'close');
  clearTimeout(timer);
  return { code: code as number | null, lines: out.trim().split('\n'), stderr };
}

const EXPECTED = [
  /^write \d+$/,
  /^writes 64$/,
  /^knowledge object$/,
  /^verb threads 1$/,
  /^note 1$/,
  /^lists 16$/,
  /^refused VERSION_CONFLICT$/,
  /^end$/,
];

it.each(['close', 'open'] as const)(
  'settles every call and lets the process exit (store left %s)',
  async (mode) => {
    const { code, lines, stderr } = await run(mode);
    expect(stderr).toBe('');
    expect(lines).toHaveLength(EXPECTED.length);
    for (const [i, line] of lines.entries()) expect(line).toMatch(EXPECTED[i] as RegExp);
    // Killed by the timer (null) when something kept the loop alive; 13 when a pending call did not.
    expect(code).toBe(0);
  },
  30_000,
);
