/** The signals that interrupt a command: Ctrl-C, and what `kill` and service managers send. */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** The undo of each `undoOnInterrupt` work running now. */
const running = new Set<() => unknown>();

/** Runs `undo`; what could not be undone stays, and the command still ends. */
const attempt = (undo: () => unknown) =>
  Promise.resolve()
    .then(undo)
    .catch(() => undefined);

/**
 * Runs `work`; when SIGINT or SIGTERM arrives meanwhile, runs `undo` (which removes what `work`
 * left half made) and then lets the signal end the process as it would have without us, so the
 * shell sees it (exit status 130 or 143). Node's default on these signals ends the process at
 * once, with no `finally` run, which left a temporary store or an empty file behind.
 */
export async function undoOnInterrupt<T>(undo: () => unknown, work: () => Promise<T>): Promise<T> {
  const stopListening = () => {
    for (const signal of SIGNALS) process.off(signal, interrupted);
  };
  function interrupted(signal: NodeJS.Signals) {
    // A second signal meanwhile ends the process at once (Node's default again): a way out of an
    // undo that hangs.
    stopListening();
    void attempt(undo).then(() => process.kill(process.pid, signal));
  }
  for (const signal of SIGNALS) process.on(signal, interrupted);
  running.add(undo);
  try {
    return await work();
  } finally {
    stopListening();
    running.delete(undo);
  }
}

let closing = false;

/**
 * Ends the command once its stdout's reader has gone (EPIPE: `cairn memories list | head -1`).
 * Output nobody reads is no failure, so a command whose work is done exits 0, as a Unix filter
 * does. One whose work is still running (`cairn demo | head -3`) is cut off as by an interrupt:
 * its undo runs first (the demo's agents, node and temporary store, which an exit at once left
 * behind) and it exits 1, since it did not finish.
 */
export function endOnClosedOutput(): void {
  if (closing) return;
  closing = true;
  if (running.size === 0) process.exit(0);
  void Promise.all([...running].map(attempt)).then(() => process.exit(1));
}
