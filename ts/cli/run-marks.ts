/**
 * Whether the process `pid` still runs: a file named for it (a restore's staging dir, a backup's
 * partial file) belongs to a run that may still be writing it. EPERM: it runs as another user.
 * A run never takes its own pid for another's: this process is alive, yet a file named for it
 * that it did not make is a dead run's whose pid was reused.
 */
export function runs(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
