import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { type Entry, Store } from '../ts/index.js';
import { tempDir } from './helpers.js';

// Kill -9 a writing process at random moments, again and again, and require after every kill
// that each write it saw acknowledged is there, that each commit is whole (its two trees agree),
// and that the integrity checker finds nothing wrong.
const ROUNDS = Number(process.env.CAIRN_KILL_ROUNDS ?? 50);
const WRITER = fileURLToPath(new URL('./fixtures/writer.mjs', import.meta.url));
const WRITERS = 8;

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('kill9'));
});

afterAll(async () => {
  await cleanup();
});

/** Runs one writer, kills it with SIGKILL at a random moment, and returns the ids it acknowledged. */
async function killedRound(round: number): Promise<{ acked: number[]; stderr: string }> {
  const child = spawn(process.execPath, [WRITER, dir, String(round), String(WRITERS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'close');
  let out = '';
  let stderr = '';
  let firstAck: () => void = () => {};
  const acking = new Promise<void>((resolve) => {
    firstAck = resolve;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.includes('\n')) firstAck();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // One round in five kills early, often during start-up or recovery; the rest once writes flow.
  if (Math.random() < 0.2) {
    await sleep(Math.random() * 80);
  } else {
    const flowing = await Promise.race([acking.then(() => true), exited.then(() => false)]);
    if (!flowing) throw new Error(`writer of round ${round} exited early:\n${stderr}`);
    await sleep(Math.random() * 150);
  }
  child.kill('SIGKILL');
  const [code, signal] = await exited;
  if (signal !== 'SIGKILL') throw new Error(`writer of round ${round} ended with ${code}/${signal}:\n${stderr}`);
  // A line cut by the kill was never fully acknowledged; only whole lines count.
  const lines = out.split('\n').slice(0, -1);
  return { acked: lines.map(Number), stderr };
}

function roundPrefix(round: number): Buffer {
  const p = Buffer.alloc(4);
  p.writeUInt32BE(round, 0);
  return p;
}

function idOf(e: Entry): number {
  return e.key.readUInt32BE(4);
}

it(`keeps every acknowledged write through ${ROUNDS} kill -9s`, { timeout: 60_000 + ROUNDS * 10_000 }, async () => {
  const ackedByRound = new Map<number, number[]>();
  let totalAcked = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const { acked, stderr } = await killedRound(round);
    ackedByRound.set(round, acked);
    totalAcked += acked.length;

    const store = await Store.open(dir);
    try {
      const ids = await store.range('ids', { prefix: roundPrefix(round) });
      const mirror = await store.range('mirror', { prefix: roundPrefix(round) });
      const present = new Set(ids.map(idOf));
      const missing = acked.filter((id) => !present.has(id));
      expect(missing, `round ${round}: acknowledged ids lost after kill -9\n${stderr}`).toEqual([]);
      // Both trees are written by the same commit: they must hold exactly the same ids.
      expect(mirror.map(idOf), `round ${round}: a commit was applied in part`).toEqual(ids.map(idOf));
      for (const e of ids) {
        expect(e.value.readUInt32LE(0), `round ${round}: value of id ${idOf(e)}`).toBe(idOf(e));
      }
      const report = await store.check();
      expect(report.problems, `round ${round}: check after kill -9`).toEqual([]);
      expect(report.ok).toBe(true);
    } finally {
      await store.close();
    }
  }

  // Finally every round's acknowledged ids, not just the latest, must still be there.
  const store = await Store.open(dir);
  try {
    for (const [round, acked] of ackedByRound) {
      for (const id of acked) {
        const k = Buffer.alloc(8);
        k.writeUInt32BE(round, 0);
        k.writeUInt32BE(id, 4);
        expect(store.get('ids', k), `round ${round}, id ${id}`).not.toBeNull();
      }
    }
    expect((await store.check()).ok).toBe(true);
  } finally {
    await store.close();
  }
  expect(totalAcked).toBeGreaterThan(0);
  console.log(`kill -9: ${ROUNDS} rounds, ${totalAcked} acknowledged writes, none lost, check clean`);
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
