import { type BackgroundTurn, WriteLanes } from './graphmemix-write-lanes.ts';

/**
 * The library's writes in one process, in call order. With one writer connection (SQLite) one at a time
 * (`exclusive`); with a store whose writes of different contexts never wait on each other (PostgreSQL,
 * `ArchiveStore.independentContextWrites`) one at a time per context, different contexts side by side. A
 * long write that runs in pieces (a user's import, a forget) queues each piece (`turn`), so the writes of other
 * users go between them instead of after all of it; while it runs it holds its context (`holding`), and writes
 * to that context (`forContext`) wait until it is done, so nothing of the same user lands between its pieces
 * (sequence numbers, the relation journal it rebuilds from).
 */
export class WriteQueue {
  private readonly lanes: WriteLanes;
  private readonly held = new Map<string, Promise<unknown>>();

  /** `parallel`: at most this many contexts' writes at once (per-context only; PARALLEL_WRITE_LANES). */
  constructor(options: { perContext?: boolean; parallel?: number } = {}) {
    this.lanes = new WriteLanes(options.perContext === true, options.parallel);
  }

  /** True when writes of different contexts run side by side. */
  get perContext(): boolean {
    return this.lanes.perContext;
  }

  /**
   * Runs `work` after every write queued before it (any context), and after one return to the event loop
   * (WriteLanes.run); every write queued after it waits for it.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.lanes.run(undefined, work);
  }

  /**
   * One turn of `contextId` without waiting for its holder: a piece of the piecewise write that holds it
   * (its import's batches). After the writes queued before it (of that context, or all of them: `exclusive`).
   */
  turn<T>(
    contextId: string,
    work: () => Promise<T>,
    asker?: string,
    background?: BackgroundTurn,
  ): Promise<T> {
    return this.lanes.run(contextId, work, asker, background);
  }

  /**
   * A write to `contextId`: after a piecewise write holding that context has finished, then in the queue.
   * `own` names a hold the caller itself took (a compaction's hold on its user's writes): its turns do not wait
   * for it. `asker`: who writes (WriteOptions.lane): waiting writes of different askers take turns.
   * `background`: a turn of background work, behind waiting writes unless urgent (WriteLanes; the per-context
   * lanes the facade uses on both backends: one line, `perContext` false, keeps call order).
   */
  async forContext<T>(
    contextId: string,
    work: () => Promise<T>,
    options: {
      own?: (hold: Promise<unknown>) => boolean;
      asker?: string | undefined;
      background?: BackgroundTurn;
    } = {},
  ): Promise<T> {
    const { own, asker, background } = options;
    // Checked again right before queueing (same synchronous turn): another holder may have come meanwhile.
    for (
      let hold = this.held.get(contextId);
      hold !== undefined && !own?.(hold);
      hold = this.held.get(contextId)
    ) {
      await hold.catch(() => undefined);
    }
    return this.turn(contextId, work, asker, background);
  }

  /**
   * Runs `run` (which queues its own pieces through `turn`) holding `contextId`. Takes the hold before
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
