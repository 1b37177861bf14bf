import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Tokens } from '../auth/tokens.js';
import { startNode } from '../server/node.js';

const AGENT = fileURLToPath(new URL('./demo-agent.js', import.meta.url));

/** Runs one agent process to its end, its output indented under `label`; resolves its exit code. */
function agent(label: string, role: string, url: string, token: string): Promise<number> {
  process.stdout.write(`\n${label}\n`);
  const child = spawn(process.execPath, [AGENT, role, url], {
    env: { ...process.env, CAIRN_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const indent = (out: NodeJS.WriteStream) => (chunk: Buffer) =>
    out.write(chunk.toString('utf8').replace(/^(?=.)/gm, '  '));
  child.stdout.on('data', indent(process.stdout));
  child.stderr.on('data', indent(process.stderr));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

/**
 * `cairn demo` (DESIGN.md §4): a node on a temporary store and two real agent processes with
 * different tokens over MCP. The writer stores knowledge, a note and a handoff, and exits; the
 * reader recalls, asks, reads the note and resumes the task. The store is deleted afterwards and
 * no real config is touched. Exit 0 when the reader found everything, else 1.
 */
export async function runDemo(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-demo-'));
  const node = await startNode({
    dataDir: dir,
    port: 0,
    adminToken: `cairn_demo-${randomBytes(16).toString('hex')}`,
    logLevel: 'silent',
    announce: () => {},
  });
  try {
    const tokens = new Tokens(node.store);
    const writer = await tokens.create({ agent: 'demo-writer' });
    const reader = await tokens.create({ agent: 'demo-reader' });
    process.stdout.write(`cairn demo: a node at ${node.url} on a temporary store (${dir})\n`);
    const wrote = await agent('agent demo-writer (its own process, its own token):', 'writer', node.url, writer.token);
    if (wrote !== 0) return 1;
    const read = await agent('agent demo-reader (another process, another token):', 'reader', node.url, reader.token);
    process.stdout.write(
      read === 0
        ? '\nThe reader found what the writer left: shared memory across agents works.\n' +
            'Run your own node with `npx cairn serve`, then `cairn connect claude` (or codex, cursor, …).\n'
        : '\nThe reader did not find everything the writer left (see above).\n',
    );
    return read === 0 ? 0 : 1;
  } finally {
    await node.close();
    await rm(dir, { recursive: true, force: true });
  }
}
