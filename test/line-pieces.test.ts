import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { describe, expect, it } from 'vitest';

import { loadPieceBytes } from '../ts/service/import-file.js';
import { gathered, linePieces, type Piece } from '../ts/service/line-pieces.js';

// How `cairn import` and the admin import route cut a file of any size into pieces of whole
// lines: whatever the chunks the bytes arrive in, the pieces put back together are the file,
// each ends at a line end, holds at most the budget unless one line alone is longer, and says
// which line it starts at.

async function* chunked(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function pieces(text: string, chunk: number, max: number): Promise<Piece[]> {
  const out: Piece[] = [];
  for await (const p of linePieces(chunked(text, chunk), max)) out.push(p);
  return out;
}

const LINES = Array.from({ length: 40 }, (_, i) => `{"line":${i},"text":"${'é'.repeat(i % 7)}"}`);

describe('linePieces', () => {
  for (const [chunk, max] of [
    [1, 64],
    [7, 64],
    [1000, 64],
    [13, 200],
    [64 * 1024, 1 << 20],
  ] as const) {
    it(`cuts at line ends only (chunks of ${chunk} bytes, pieces of ${max})`, async () => {
      const text = `${LINES.join('\n')}\n`;
      const got = await pieces(text, chunk, max);
      expect(Buffer.concat(got.map((p) => p.bytes)).toString()).toBe(text);
      let line = 0;
      for (const p of got) {
        expect(p.first).toBe(line);
        expect(p.bytes.at(-1)).toBe(0x0a);
        const lines = p.bytes.toString().split('\n').slice(0, -1);
        expect(lines.length === 1 || p.bytes.length <= max).toBe(true);
        expect(lines).toEqual(LINES.slice(line, line + lines.length));
        line += lines.length;
      }
      expect(line).toBe(LINES.length);
    });
  }

  it('gives a line longer than the budget a piece of its own, and keeps a last line without its newline', async () => {
    const long = 'x'.repeat(500);
    const got = await pieces(`a\n${long}\nb\nc`, 10, 100);
    expect(got.map((p) => [p.first, p.bytes.toString()])).toEqual([
      [0, 'a\n'],
      [1, `${long}\n`],
      [2, 'b\nc'],
    ]);
  });

  it('yields one empty piece for an empty stream', async () => {
    expect(await pieces('', 4, 10)).toEqual([{ first: 0, bytes: Buffer.alloc(0) }]);
  });

  // A piece is held once while it is used (a load runs for seconds on it): the chunks it was
  // joined from are let go first, all but the one just read (found by an audit: they stayed, a
  // 182 MB piece held twice).
  it('lets go of the chunks a piece was joined from before yielding it', async () => {
    for (const budget of [1 << 20, 200]) {
      const { chunks, alive, count } = watchedChunks(`${LINES.join('\n')}\n`, 16);
      let pieces = 0;
      for await (const p of linePieces(chunks, budget)) {
        pieces++;
        expect(p.bytes.length).toBeGreaterThan(0);
        expect(await alive()).toBeLessThanOrEqual(1);
      }
      expect(count()).toBeGreaterThan(50);
      expect(pieces).toBe(budget === 200 ? 6 : 1);
    }
  });
});

/** The garbage collector, for tests that a buffer is let go (`--expose-gc` set at run time). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * `text` as chunks of `size` bytes, each in its own ArrayBuffer, and how many of those are still
 * reachable once garbage is collected (weak references only reach them here).
 */
function watchedChunks(text: string, size: number) {
  const gc = collector();
  const refs: WeakRef<ArrayBuffer>[] = [];
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += size) {
      const chunk = new Uint8Array(bytes.subarray(at, at + size));
      refs.push(new WeakRef(chunk.buffer));
      yield chunk;
    }
  }
  const alive = async () => {
    // A weak reference keeps its target through the job that made or read it.
    await new Promise((r) => setImmediate(r));
    gc();
    return refs.filter((r) => r.deref() !== undefined).length;
  };
  return { chunks: chunks(), alive, count: () => refs.length };
}

describe('gathered', () => {
  it('copies the chunks into one buffer of the size given, holding none of them, and refuses more', async () => {
    const text = `${LINES.join('\n')}\n`;
    const size = Buffer.byteLength(text);
    const { chunks, alive } = watchedChunks(text, 16);
    const all = await gathered(chunks, size);
    expect(all?.toString()).toBe(text);
    expect(all?.buffer.byteLength).toBe(size);
    expect(await alive()).toBe(0);
    expect(await gathered(watchedChunks(text, 16).chunks, size - 1)).toBeNull();
    expect((await gathered(watchedChunks(text, 16).chunks, size + 10))?.toString()).toBe(text);
  });
});

describe('loadPieceBytes', () => {
  const GiB = 1 << 30;
  it('is a sixteenth of memory, at least 64 MiB and at most 1 GiB, unless CAIRN_LOAD_PIECE_BYTES says', () => {
    expect(loadPieceBytes({}, 4 * GiB)).toBe(GiB / 4);
    expect(loadPieceBytes({}, 0.5 * GiB)).toBe(64 << 20);
    expect(loadPieceBytes({}, 64 * GiB)).toBe(GiB);
    expect(loadPieceBytes({ CAIRN_LOAD_PIECE_BYTES: '1000' }, 64 * GiB)).toBe(1000);
    for (const bad of ['0', '-5', 'lots', '1.5', '1e3', '0x10', ' 1000'])
      expect(loadPieceBytes({ CAIRN_LOAD_PIECE_BYTES: bad }, 4 * GiB)).toBe(GiB / 4);
  });
});
