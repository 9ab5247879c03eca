/**
 * Waits before each automatic retry of failed background work of the write path (the after-write semantic
 * drain, a forget resumed after open, a background media job or recovery page), then none: a transient fault (a lock another process held past the busy timeout,
 * a full disk being cleared) is retried within seconds, a lasting one costs four attempts over ~11 minutes and
 * not a loop; past them the user's next request or the next open asks again. Set by hand, not tuned.
 */
export const BACKGROUND_RETRY_DELAYS_MS: readonly number[] = [1_000, 10_000, 60_000, 600_000];

/** A key's consecutive failures. */
export interface FailureCount {
  attempts: number;
  /** When the first of them happened (ISO). */
  since: string;
  /** The wait before the retry planned now; absent: none was planned. */
  delayMs?: number;
}

/**
 * The planned retries of failed background work, one per key (a user), with its failures counted until a
 * success. Timers keep no process alive (`unref`): a process that exits leaves the work for the next open.
 */
export class RetryTimers {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failing = new Map<string, { attempts: number; since: string }>();

  constructor(private readonly delaysMs: readonly number[] = BACKGROUND_RETRY_DELAYS_MS) {}

  /** Counts a failure of `key` and, when `plan` and a delay is left, runs `retry` after it. */
  failed(key: string, retry: () => void, plan: boolean, now = new Date()): FailureCount {
    const before = this.failing.get(key);
    const count = { attempts: (before?.attempts ?? 0) + 1, since: before?.since ?? now.toISOString() };
    this.failing.set(key, count);
    this.cancel(key);
    const delayMs = plan ? this.delaysMs[count.attempts - 1] : undefined;
    if (delayMs === undefined) return count;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      retry();
    }, delayMs);
    timer.unref();
    this.timers.set(key, timer);
    return { ...count, delayMs };
  }

  /** Drops the count of `key` (a success, or work left for later): it starts over. True when it had failed. */
  reset(key: string): boolean {
    return this.failing.delete(key);
  }

  /** Drops the retry planned for `key` (its work runs now, asked for). True when one was planned. */
  cancel(key: string): boolean {
    const timer = this.timers.get(key);
    if (timer === undefined) return false;
    clearTimeout(timer);
    this.timers.delete(key);
    return true;
  }

  /** Retries planned now. */
  planned(): number {
    return this.timers.size;
  }

  /** Drops every planned retry (close). */
  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
