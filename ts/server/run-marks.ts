import { readFileSync } from 'node:fs';

// A file a run names for its process (a restore's staging dir, a backup's partial file) carries
// a mark: the pid, and on Linux the process's start time, `<pid>-<start>`. A later run removes
// the file only when the run that made it is gone. A pid alone cannot say so: pids are reused, and
// a dead run's file whose pid an unrelated process now holds would look live (and be refused,
// left for the user to remove by hand); the pid and its start time together name one process.

/** A mark as it appears in a file name: a pid, then its start time where that was known. */
export const MARK = String.raw`\d+(?:-\d+)?`;

/**
 * When process `pid` started, as Linux counts it (clock ticks after boot: field 22 of
 * `/proc/<pid>/stat`), or null where that cannot be read (no /proc, a process gone or hidden).
 */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces and ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** This process's mark: `<pid>-<start>`, or `<pid>` where its start time cannot be read. */
export function ownMark(): string {
  const start = startTime(process.pid);
  return start === null ? String(process.pid) : `${process.pid}-${start}`;
}

/** The pid a mark names. */
export const markPid = (mark: string) => Number(mark.split('-')[0]);

/**
 * Whether the run that `mark` names may still be writing its file: a process with that pid runs
 * and, when the mark has a start time and the process's can be read, it started then. Where the
 * start time cannot be checked (a mark without one, no /proc, a process of another user hidden
 * from this one), a live pid is taken as the sign. EPERM: it runs as another user. A pid-only
 * mark naming this process is a dead run's whose pid was reused: this run did not make it.
 */
export function stillRuns(mark: string): boolean {
  const [pidText = '', start] = mark.split('-');
  const pid = Number(pidText);
  if (start !== undefined) {
    const now = startTime(pid);
    if (now !== null) return now === start;
  } else if (pid === process.pid) {
    return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
