import { parentPort } from 'node:worker_threads';

import type { Block } from './blocks.js';
import { DocumentError } from './errors.js';
import { type ReadType, readBlocks } from './read.js';

/** What the pool sends a reader: one document. */
export interface ReadRequest {
  bytes: Uint8Array;
  type: ReadType;
  /** The reader's heap limit in MB (`ReadLimits.mb`), which also bounds what a file unpacks to. */
  mb: number;
}

/** What a reader answers: the document's blocks, a refusal to carry to the caller as it is, or a
 * failure of the reader itself. */
export type ReadReply =
  | { blocks: Block[] }
  | { refused: { code: DocumentError['code']; message: string } }
  | { failed: string };

// A document reader's thread (`worker-pool.ts`): one document a message, one reply for each.
parentPort?.on('message', async ({ bytes, type, mb }: ReadRequest) => {
  let reply: ReadReply;
  try {
    reply = { blocks: await readBlocks(bytes, type, mb) };
  } catch (err) {
    reply =
      err instanceof DocumentError
        ? { refused: { code: err.code, message: err.message } }
        : { failed: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(reply);
});
