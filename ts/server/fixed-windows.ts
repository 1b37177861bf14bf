/** A key's count in its current window. */
export interface Window {
  /** What was counted this window (a caller's unit: requests, or parts of one). */
  used: number;
  /** When the window began (ms since the epoch). */
  start: number;
}

/**
 * Counts per key in fixed windows of `windowMs`, each key's from its first count (a new one once
 * it has run out), for at most `cap` keys: past that the least recently counted key is dropped,
 * so a flood of keys costs bounded memory and evicts only keys no longer seen. What the token
 * limit (`RateBuckets`), the end users' shares (`UserShares`) and requests without a valid token
 * (`AuthFailures`) each count in.
 */
export class FixedWindows {
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly windowMs: number,
    private readonly cap: number,
  ) {}

  /** `key`'s window at `now` (a fresh one when it had none or its last has run out), marked as
   * seen most recently. */
  at(key: string, now: number): Window {
    let w = this.windows.get(key);
    if (w === undefined || w.start + this.windowMs <= now) w = { used: 0, start: now };
    this.windows.delete(key);
    this.windows.set(key, w);
    if (this.windows.size > this.cap) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    return w;
  }

  /** `key`'s window while it still runs at `now`, left where it is in the order; else undefined. */
  running(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    return w === undefined || w.start + this.windowMs <= now ? undefined : w;
  }

  /** Seconds until `w` ends, at least one (for `Retry-After`). */
  secondsLeft(w: Window, now: number): number {
    return Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
  }
}
