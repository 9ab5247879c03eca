/**
 * The library's writes in one process: one at a time, in call order (`exclusive`), as a single writer
 * connection wants. A long write that runs in pieces (a user's import, a forget) queues each piece, so the
 * writes of other users go between them instead of after all of it; while it runs it holds its context
 * (`holding`), and writes to that context (`forContext`) wait until it is done, so nothing of the same user
 * lands between its pieces (sequence numbers, the relation journal it rebuilds from).
 */
export class WriteQueue {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly held = new Map<string, Promise<unknown>>();

  /**
   * Runs `work` after every write queued before it, and after one return to the event loop: a store that
   * answers synchronously (SQLite) would otherwise run a piecewise write's turns back to back in microtasks,
   * and the timers and requests whose writes are meant to go between them would wait for all of it.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(yieldToEventLoop, yieldToEventLoop).then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** A write to `contextId`: after a piecewise write holding that context has finished, then in the queue. */
  async forContext<T>(contextId: string, work: () => Promise<T>): Promise<T> {
    // Checked again right before queueing (same synchronous turn): another holder may have come meanwhile.
    while (this.held.has(contextId)) await this.released(contextId);
    return this.exclusive(work);
  }

  /**
   * Runs `run` (which queues its own pieces through `exclusive`) holding `contextId`. Takes the hold before
   * its first await when the context is free, so a write to the context issued after this call starts waits
   * for all of it; a second holder of the same context waits for the first.
   */
  async holding<T>(contextId: string, run: () => Promise<T>): Promise<T> {
    while (this.held.has(contextId)) await this.released(contextId);
    const running = run();
    this.held.set(contextId, running);
    try {
      return await running;
    } finally {
      if (this.held.get(contextId) === running) this.held.delete(contextId);
    }
  }

  /**
   * A write that may touch any context (an import whose file names its users): one turn, queued once no
   * piecewise write holds a context, so it never lands between the pieces of one.
   */
  async forAny<T>(work: () => Promise<T>): Promise<T> {
    while (this.held.size > 0) await Promise.allSettled([...this.held.values()]);
    return this.exclusive(work);
  }

  /** True while a piecewise write holds `contextId`. */
  isHeld(contextId: string): boolean {
    return this.held.has(contextId);
  }

  private async released(contextId: string): Promise<void> {
    for (let hold = this.held.get(contextId); hold !== undefined; hold = this.held.get(contextId)) {
      await hold.catch(() => undefined);
    }
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
