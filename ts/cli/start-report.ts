import { closeSync, fstatSync, writeSync } from 'node:fs';

// How a `cairn serve` that `cairn mcp` starts in the background tells that bridge whether it
// started. The bridge gives it a pipe (`CAIRN_START_FD` names its descriptor); serve writes why it
// could not start there as one JSON object, or closes it once it serves. `node.log` cannot tell
// the bridge: bridges started at the same moment each start a node, and all of them write there.

/** The variable naming the descriptor of the bridge's pipe in `cairn serve`. */
export const START_FD = 'CAIRN_START_FD';

/**
 * Why a node did not start; `held` when another process holds the store (a node, say), `portTaken`
 * when another program listens on its port.
 */
export interface StartFailure {
  held: boolean;
  message: string;
  portTaken?: true;
}

/** Says `failure` (without one: that the node serves) on the bridge's pipe, when there is one. */
export function reportStart(env: NodeJS.ProcessEnv, failure?: StartFailure): void {
  const fd = Number(env[START_FD]);
  if (!Number.isSafeInteger(fd) || fd < 3) return;
  try {
    // Only a pipe (libuv makes a socket pair): a number left in someone's environment must not
    // make serve write into whatever file that descriptor is.
    const stat = fstatSync(fd);
    if (!stat.isFIFO() && !stat.isSocket()) return;
    if (failure !== undefined) writeSync(fd, JSON.stringify(failure));
    closeSync(fd);
  } catch {
    // The bridge is gone (EPIPE): nobody is waiting for the answer.
  }
}

/** What a serve said on its pipe: its failure, or undefined when it said nothing readable. */
export function readStartFailure(said: string): StartFailure | undefined {
  try {
    const parsed = JSON.parse(said) as Partial<StartFailure>;
    if (typeof parsed.held === 'boolean' && typeof parsed.message === 'string') {
      return { held: parsed.held, message: parsed.message, ...(parsed.portTaken === true ? { portTaken: true } : {}) };
    }
  } catch {
    // Nothing, or cut short: the caller says how the process ended instead.
  }
  return undefined;
}
