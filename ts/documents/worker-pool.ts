import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

import type { Block } from './blocks.js';
import { DocumentError } from './errors.js';
import type { ReadType } from './read.js';
import type { ReadReply, ReadRequest } from './read-worker.js';
import { workerThread } from './worker-thread.js';

/**
 * At most this many documents are read at once, each on its own thread; more wait their turn. One
 * core is left to the event loop, which answers every other request meanwhile.
 */
const READERS = Math.max(1, Math.min(4, availableParallelism() - 1));
/** A reader left idle this long ends, giving back the memory pdf.js and mammoth hold. */
const IDLE_MS = 10_000;

interface Job extends ReadRequest {
  resolve(blocks: Block[]): void;
  reject(err: Error): void;
}

interface Reader {
  worker: Worker;
  job?: Job;
  idle?: NodeJS.Timeout;
}

const readers = new Set<Reader>();
const waiting: Job[] = [];

/**
 * The blocks of a PDF, DOCX or HTML file, read on a worker thread: pdf.js and mammoth work
 * synchronously (about a second for a 300-page PDF), which on the event loop would hold up every
 * other request. Throws the reader's `DocumentError` as it is.
 *
 * A reader keeps the process alive only while it reads: an idle one is unref'd, so a node that
 * shuts down exits without waiting for it, and it ends on its own after `IDLE_MS`.
 */
export function readOffThread(bytes: Uint8Array, type: ReadType): Promise<Block[]> {
  return new Promise((resolve, reject) => {
    waiting.push({ bytes, type, resolve, reject });
    dispatch();
  });
}

/** Hands waiting jobs to idle readers, starting readers up to `READERS`. */
function dispatch(): void {
  for (;;) {
    const job = waiting[0];
    if (job === undefined) return;
    const reader = [...readers].find((r) => r.job === undefined) ?? (readers.size < READERS ? start() : undefined);
    if (reader === undefined) return;
    waiting.shift();
    clearTimeout(reader.idle);
    reader.job = job;
    reader.worker.ref();
    const request: ReadRequest = { bytes: job.bytes, type: job.type };
    reader.worker.postMessage(request);
  }
}

function start(): Reader {
  const reader: Reader = { worker: workerThread('read-worker') };
  readers.add(reader);
  reader.worker.on('message', (reply: ReadReply) => {
    const job = reader.job;
    reader.job = undefined;
    reader.worker.unref();
    reader.idle = setTimeout(() => {
      readers.delete(reader);
      void reader.worker.terminate();
    }, IDLE_MS).unref();
    if (job !== undefined) settle(job, reply);
    dispatch();
  });
  // A reader that dies (out of memory, a crash in a reader library) fails its document, not the node.
  const lost = (err: Error) => {
    readers.delete(reader);
    clearTimeout(reader.idle);
    const job = reader.job;
    reader.job = undefined;
    job?.reject(err);
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
