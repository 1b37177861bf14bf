import type { Readable } from 'node:stream';

import { underflowPath } from '../protocol/body-problem.js';

/** A JSON-RPC request id. */
type RequestId = string | number;

/**
 * The tool calls read from `stdin` whose arguments hold a number JSON.parse makes 0 though it
 * names another (`1e-400`), with its path in the arguments. The stdio transport (`StdioLines`)
 * hands the bridge each message parsed, its number 0 already; so its lines are read here too,
 * split at "\n" as the transport splits them, and before it reads them: add this before the
 * transport.
 */
export function watchUnderflows(stdin: Readable) {
  const found = new Map<RequestId, (string | number)[]>();
  let pending = Buffer.alloc(0);
  const read = (line: string) => {
    // Only a negative exponent or a run of 323 zeros can come nearer 0 than a double holds.
    if (!/[eE]-|0{323}/.test(line)) return;
    const path = underflowPath(line);
    if (path?.[0] !== 'params' || path[1] !== 'arguments') return;
    try {
      const { id } = JSON.parse(line) as { id?: unknown };
      if (typeof id === 'string' || typeof id === 'number') found.set(id, path.slice(2));
    } catch {
      // Not JSON: the transport answers it.
    }
  };
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let end = pending.indexOf(0x0a); end >= 0; end = pending.indexOf(0x0a)) {
      read(pending.toString('utf8', 0, end));
      pending = pending.subarray(end + 1);
    }
  };
  stdin.on('data', onData);
  return {
    /** The path of the number a call `id` lost to 0, once; undefined when it lost none. */
    take(id: RequestId): (string | number)[] | undefined {
      const path = found.get(id);
      found.delete(id);
      return path;
    },
    stop: () => void stdin.off('data', onData),
  };
}
