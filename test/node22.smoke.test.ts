import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { CLI, npxEnv, tempDir } from './helpers.js';

// Cairn on Node 22, which the brief promises beside Node 20 and which CI's machines (Node 20) do
// not run otherwise: the built `cairn serve` under a Node 22 fetched from the npm registry on first
// use, as the conformance test fetches it; its native addon loads, it answers /health, stores a
// fact and recalls it over HTTP, and stops cleanly on SIGTERM. `npm run test:node22` runs the
// whole suite under Node 22; this keeps the smallest path of it in every `npm test`.

const run = promisify(execFile);
const ADMIN = 'cairn_node22-smoke-admin-token-0123456789abcdef';

let node22: string;
let dir: string;
let cleanup: () => Promise<void>;
let child: ChildProcess | undefined;

/** The executable of a Node 22 from the npm registry (npx caches it), failing clearly without it. */
async function fetchNode22(): Promise<{ execPath: string; version: string }> {
  const args = ['-y', '-p', 'node@22', 'node', '-p', 'JSON.stringify([process.execPath, process.version])'];
  try {
    const { stdout } = await run('npx', args, { env: npxEnv, timeout: 240_000 });
    const [execPath, version] = JSON.parse(stdout) as [string, string];
    return { execPath, version };
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`could not fetch Node 22 from the npm registry (npx ${args.join(' ')}):\n${e.stderr || e.message}`);
  }
}

beforeAll(async () => {
  const fetched = await fetchNode22();
  expect(fetched.version).toMatch(/^v22\./);
  node22 = fetched.execPath;
  ({ dir, cleanup } = await tempDir('node22'));
}, 300_000);
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
  await cleanup?.();
});

/** Starts `cairn serve` under Node 22 on a free port; its URL once it wrote node.json. */
async function serve(stderr: string[]): Promise<string> {
  const data = join(dir, 'data');
  child = spawn(node22, [CLI, 'serve', '--data-dir', data, '--port', '0'], {
    env: { ...process.env, CAIRN_ADMIN_TOKEN: ADMIN, CAIRN_LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null)
      throw new Error(`cairn serve under Node 22 exited ${child.exitCode}:\n${stderr.join('')}`);
    const file = join(data, 'node.json');
    if (existsSync(file)) {
      const written = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number };
      expect(written.pid).toBe(child.pid);
      return written.url;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`cairn serve under Node 22 did not start in 20 s:\n${stderr.join('')}`);
}

/** A reply's status and body, as this test reads them. */
interface Reply {
  status: number;
  body: { stored?: unknown; facts?: { subject: string; relation: string; object: string }[] };
}

/** One memory verb over HTTP with the admin token. */
async function post(url: string, verb: string, body: unknown): Promise<Reply> {
  const res = await fetch(`${url}/v1/memory/${verb}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Reply['body'] };
}

it('serves under Node 22: health, a remember and its recall over HTTP, a clean stop', async () => {
  const stderr: string[] = [];
  const url = await serve(stderr);

  const health = await fetch(`${url}/health`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok' });

  const stored = await post(url, 'remember', {
    content: 'Priya Raman works at Acme Robotics.',
    facts: {
      entities: [
        { name: 'Priya Raman', type: 'person' },
        { name: 'Acme Robotics', type: 'company' },
      ],
      relations: [{ source: 'Priya Raman', target: 'Acme Robotics', type: 'works_at' }],
    },
  });
  expect(stored.status, JSON.stringify(stored.body)).toBe(200);
  expect(stored.body.stored).toMatchObject({ entities: 2, relations: 1 });

  const recall = await post(url, 'recall', { subject: 'Priya' });
  expect(recall.status, JSON.stringify(recall.body)).toBe(200);
  const facts = (recall.body.facts ?? []).map((f) => `${f.subject} ${f.relation} ${f.object}`);
  expect(facts).toContain('Priya Raman works_at Acme Robotics');

  const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
  child?.kill('SIGTERM');
  expect(await exited, stderr.join('')).toBe(0);
  expect(existsSync(join(dir, 'data', 'node.json'))).toBe(false);
  // Nothing but the node's own lines: a deprecation or other warning Node 22 prints fails here.
  expect(stderr.join('')).not.toMatch(/Warning|deprecat/i);
}, 60_000);
