import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Tokens } from '../auth/tokens.js';
import { startNode } from '../server/node.js';
import { undoOnInterrupt } from './interrupt.js';

const AGENT = fileURLToPath(new URL('./demo-agent.js', import.meta.url));

/** The demo's agent processes running now, and whether it is ending (no new one starts then). */
interface Agents {
  running: Set<ChildProcess>;
  ending: boolean;
}

/** Runs one agent process to its end, its output indented under `label`; resolves its exit code. */
function agent(agents: Agents, label: string, role: string, url: string, token: string): Promise<number> {
  if (agents.ending) return Promise.resolve(1);
  process.stdout.write(`\n${label}\n`);
  const child = spawn(process.execPath, [AGENT, role, url], {
    env: { ...process.env, CAIRN_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agents.running.add(child);
  const indent = (out: NodeJS.WriteStream) => (chunk: Buffer) =>
    out.write(chunk.toString('utf8').replace(/^(?=.)/gm, '  '));
  child.stdout.on('data', indent(process.stdout));
  child.stderr.on('data', indent(process.stderr));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      agents.running.delete(child);
      resolve(code ?? 1);
    }),
  );
}

/**
 * `cairn demo` (DESIGN.md §4): a node on a temporary store and two real agent processes with
 * different tokens over MCP. The writer stores knowledge, a note and a handoff, and exits; the
 * reader recalls, asks, reads the note and resumes the task. The store is deleted afterwards, an
 * interrupted demo's too, and no real config is touched. Exit 0 when the reader found everything,
 * else 1.
 */
export async function runDemo(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-demo-'));
  const agents: Agents = { running: new Set(), ending: false };
  const starting = startNode({
    dataDir: dir,
    port: 0,
    adminToken: `cairn_demo-${randomBytes(16).toString('hex')}`,
    logLevel: 'silent',
    announce: () => {},
  });
  // At the end, or first thing when interrupted: the agents, then the node (once it has started,
  // so it creates nothing after the store is gone), then the store.
  let ended: Promise<void> | undefined;
  const end = () => {
    ended ??= (async () => {
      agents.ending = true;
      for (const child of agents.running) child.kill();
      await (await starting.catch(() => undefined))?.close();
      await rm(dir, { recursive: true, force: true });
    })();
    return ended;
  };
  return undoOnInterrupt(end, async () => {
    try {
      const node = await starting;
      const tokens = new Tokens(node.store);
      const writer = await tokens.create({ agent: 'demo-writer' });
      const reader = await tokens.create({ agent: 'demo-reader' });
      process.stdout.write(`cairn demo: a node at ${node.url} on a temporary store (${dir})\n`);
      const wrote = await agent(
        agents,
        'agent demo-writer (its own process, its own token):',
        'writer',
        node.url,
        writer.token,
      );
      if (wrote !== 0) return 1;
      const read = await agent(
        agents,
        'agent demo-reader (another process, another token):',
        'reader',
        node.url,
        reader.token,
      );
      // Interrupted: the reader was stopped, so it has no verdict to give.
      if (agents.ending) return 1;
      process.stdout.write(
        read === 0
          ? '\nThe reader found what the writer left: shared memory across agents works.\n' +
              'Run your own node with `npx cairn serve`, then `cairn connect claude` (or codex, cursor, …).\n'
          : '\nThe reader did not find everything the writer left (see above).\n',
      );
      return read === 0 ? 0 : 1;
    } finally {
      await end();
    }
  });
}
