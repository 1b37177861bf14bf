/** The signals that interrupt a command: Ctrl-C, and what `kill` and service managers send. */
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

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
    void Promise.resolve()
      .then(undo)
      // What could not be undone stays; the signal still ends the process, as it was sent to.
      .catch(() => undefined)
      .then(() => process.kill(process.pid, signal));
  }
  for (const signal of SIGNALS) process.on(signal, interrupted);
  try {
    return await work();
  } finally {
    stopListening();
  }
}
