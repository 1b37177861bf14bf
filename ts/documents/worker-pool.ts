import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

import type { Block } from './blocks.js';
import { DocumentError } from './errors.js';
import type { ReadType } from './read.js';
import { readLimits } from './read-limits.js';
import type { ReadReply, ReadRequest } from './read-worker.js';
import { workerThread } from './worker-thread.js';

/**
 * At most this many documents are read at once, each on its own thread; more wait their turn. One
 * core is left to the event loop, which answers every other request meanwhile.
 */
const READERS = Math.max(1, Math.min(4, availableParallelism() - 1));
/** A reader left idle this long ends, giving back the memory pdf.js and mammoth hold. */
const IDLE_MS = 10_000;

interface Job extends Omit<ReadRequest, 'mb'> {
  /** Whose document it is (`readOffThread`): the readers take turns between owners. */
  owner: string;
  resolve(blocks: Block[]): void;
  reject(err: Error): void;
  /** Stops the reader when the document has taken its time (`ReadLimits.seconds`). */
  deadline?: NodeJS.Timeout;
}

interface Reader {
  worker: Worker;
  /** The heap limit it was started with (`ReadLimits.mb`). */
  mb: number;
  job?: Job;
  idle?: NodeJS.Timeout;
}

const readers = new Set<Reader>();
const waiting: Job[] = [];
/** When each owner with documents waiting was last given a reader (a count of dispatches). */
const served = new Map<string, number>();
let dispatches = 0;

/**
 * The waiting job to read next: the oldest of the owner given a reader longest ago (one never given
 * one first). A FIFO queue made one agent's pile of PDFs hold every other caller's document until
 * the whole pile was read.
 */
function nextJob(): Job | undefined {
  let best: Job | undefined;
  let bestServed = Number.POSITIVE_INFINITY;
  for (const job of waiting) {
    const at = served.get(job.owner) ?? -1;
    if (at < bestServed) {
      best = job;
      bestServed = at;
    }
  }
  return best;
}

/**
 * The blocks of a PDF, DOCX or HTML file, read on a worker thread: pdf.js and mammoth work
 * synchronously (about a second for a 300-page PDF), which on the event loop would hold up every
 * other request. Throws the reader's `DocumentError` as it is.
 *
 * A reader keeps the process alive only while it reads: an idle one is unref'd, so a node that
 * shuts down exits without waiting for it, and it ends on its own after `IDLE_MS`. A document that
 * takes longer than its time or more heap than its reader has (`read-limits.ts`) is refused with
 * `DOCUMENT_NOT_READABLE`, and its reader is ended. `owner` names the caller (token and user):
 * while documents wait, the readers take turns between owners (`nextJob`).
 */
export function readOffThread(bytes: Uint8Array, type: ReadType, owner: string): Promise<Block[]> {
  return new Promise((resolve, reject) => {
    waiting.push({ bytes, type, owner, resolve, reject });
    dispatch();
  });
}

/** Hands waiting jobs to idle readers, starting readers up to `READERS`. */
function dispatch(): void {
  for (;;) {
    const job = nextJob();
    if (job === undefined) return;
    const { seconds, mb } = readLimits();
    // An idle reader started under another heap limit is ended: the limit in force applies.
    for (const r of readers) if (r.job === undefined && r.mb !== mb) end(r);
    const reader = [...readers].find((r) => r.job === undefined) ?? (readers.size < READERS ? start(mb) : undefined);
    if (reader === undefined) return;
    waiting.splice(waiting.indexOf(job), 1);
    // An owner with nothing left waiting is forgotten, so the map holds only owners in the queue.
    if (waiting.some((w) => w.owner === job.owner)) served.set(job.owner, ++dispatches);
    else served.delete(job.owner);
    clearTimeout(reader.idle);
    reader.job = job;
    reader.worker.ref();
    job.deadline = setTimeout(() => overrun(reader, job, seconds), seconds * 1000);
    const request: ReadRequest = { bytes: job.bytes, type: job.type, mb };
    reader.worker.postMessage(request);
  }
}

/** Ends a reader: it takes no more documents. */
function end(reader: Reader): void {
  readers.delete(reader);
  clearTimeout(reader.idle);
  void reader.worker.terminate();
}

/** Ends a reader whose document took more than `seconds`, refusing the document. */
function overrun(reader: Reader, job: Job, seconds: number): void {
  if (reader.job !== job) return;
  reader.job = undefined;
  end(reader);
  job.reject(
    new DocumentError(
      'DOCUMENT_NOT_READABLE',
      `reading it took longer than ${seconds} s (CAIRN_DOCUMENT_READ_SECONDS), so it was stopped`,
    ),
  );
  dispatch();
}

function start(mb: number): Reader {
  const reader: Reader = { mb, worker: workerThread('read-worker', { maxOldGenerationSizeMb: mb }) };
  readers.add(reader);
  reader.worker.on('message', (reply: ReadReply) => {
    const job = reader.job;
    reader.job = undefined;
    clearTimeout(job?.deadline);
    reader.worker.unref();
    reader.idle = setTimeout(() => end(reader), IDLE_MS).unref();
    if (job !== undefined) settle(job, reply);
    dispatch();
  });
  // A reader that dies (out of memory, a crash in a reader library) fails its document, not the node.
  const lost = (err: Error & { code?: string }) => {
    readers.delete(reader);
    clearTimeout(reader.idle);
    const job = reader.job;
    reader.job = undefined;
    clearTimeout(job?.deadline);
    const outOfMemory = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
    const why = `reading it needed more than ${mb} MB of memory (CAIRN_DOCUMENT_READ_MB), so it was stopped`;
    job?.reject(outOfMemory ? new DocumentError('DOCUMENT_NOT_READABLE', why) : err);
    dispatch();
  };
  reader.worker.on('error', lost);
  reader.worker.on('exit', (code) => lost(new Error(`the document reader stopped (exit code ${code})`)));
  return reader;
}

function settle(job: Job, reply: ReadReply): void {
  if ('blocks' in reply) job.resolve(reply.blocks);
  else if ('refused' in reply) job.reject(new DocumentError(reply.refused.code, reply.refused.message));
  else job.reject(new Error(`the document reader failed: ${reply.failed}`));
}
