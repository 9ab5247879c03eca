/**
 * How many contexts' turns run at once at most (per-context lanes): each holds a pooled connection and its
 * working set (records, kNN searches), and PostgreSQL's default pool has 10 connections, shared with reads.
 */
export const PARALLEL_WRITE_LANES = 4;

/**
 * Turns of writes, in call order, either in one line for the whole process (`perContext` false: a store with
 * one writer connection, SQLite) or in one lane per context (`perContext` true: a store whose writes of
 * different contexts never wait on each other, PostgreSQL), at most `parallel` lanes' turns running at once
 * (the others wait in call order). A turn without a context (one that may touch any) runs after every turn
 * queued before it, in every lane, and every turn queued after it waits for it.
 */
export class WriteLanes {
  /** The last turn without a context (all turns, in one line). */
  private barrier: Promise<unknown> = Promise.resolve();
  /** Each context's last turn queued after the barrier (per-context lanes only); dropped once it settles. */
  private readonly lanes = new Map<string, Promise<unknown>>();

  /** Lane turns running now (at most `parallel`), and those waiting for one of them to end, first come first. */
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly perContext: boolean,
    private readonly parallel = PARALLEL_WRITE_LANES,
  ) {}

  /** Contexts whose lane holds a turn not settled yet (per-context lanes only). */
  get openLanes(): number {
    return this.lanes.size;
  }

  /**
   * Runs `work` after the turns it must follow, and after one return to the event loop: a store that answers
   * synchronously (SQLite) would otherwise run a piecewise write's turns back to back in microtasks, and the
   * timers and requests whose writes are meant to go between them would wait for all of it.
   */
  run<T>(contextId: string | undefined, work: () => Promise<T>): Promise<T> {
    if (!this.perContext || contextId === undefined) {
      const after = this.perContext ? Promise.all([this.barrier, ...this.lanes.values()]) : this.barrier;
      // Every later turn waits for this one through the barrier: the lanes before it need not be kept.
      this.lanes.clear();
      const next = after.then(yieldToEventLoop, yieldToEventLoop).then(work);
      this.barrier = next.catch(() => undefined);
      return next;
    }
    const lane = this.lanes.get(contextId);
    const after = lane === undefined ? this.barrier : lane;
    const next = after.then(yieldToEventLoop, yieldToEventLoop).then(() => this.inSlot(work));
    // The lane's tail is behind the barrier already (a lane starts from it; a barrier clears the lanes).
    const tail = next.catch(() => undefined);
    this.lanes.set(contextId, tail);
    void tail.then(() => {
      if (this.lanes.get(contextId) === tail) this.lanes.delete(contextId);
    });
    return next;
  }

  /** Runs `work` once fewer than `parallel` lane turns run (a turn ending hands its slot to the first waiting). */
  private async inSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.parallel) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
