/**
 * How many contexts' turns run at once at most (per-context lanes): each holds a pooled connection and its
 * working set (records, kNN searches), and PostgreSQL's default pool has 10 connections, shared with reads.
 */
export const PARALLEL_WRITE_LANES = 4;

/**
 * While background turns wait, every this many foreground turns handed a slot one background turn gets the
 * next (so background work goes on under a steady stream of writes; it gets every slot nobody else waits for).
 */
export const FOREGROUND_TURNS_PER_BACKGROUND = 4;

/**
 * A turn of background work (a step of an automatic compaction): it waits behind the foreground turns of
 * every asker, except that it goes first while `urgent()` (a user's writes wait for it).
 */
export interface BackgroundTurn {
  urgent(): boolean;
}

/**
 * Turns of writes, in call order, either in one line for the whole process (`perContext` false: a store with
 * one writer connection, SQLite) or in one lane per context (`perContext` true: a store whose writes of
 * different contexts never wait on each other, PostgreSQL), at most `parallel` lanes' turns running at once
 * (the others wait, askers taking turns: `run`'s `asker`). A turn without a context (one that may touch any)
 * runs after every turn queued before it, in every lane, and every turn queued after it waits for it.
 */
export class WriteLanes {
  /** The last turn without a context (all turns, in one line). */
  private barrier: Promise<unknown> = Promise.resolve();
  /** Each context's last turn queued after the barrier (per-context lanes only); dropped once it settles. */
  private readonly lanes = new Map<string, Promise<unknown>>();

  /**
   * Lane turns running now (at most `parallel`), and those waiting for one of them to end by who asks (the
   * `asker` of `run`): askers take turns, each asker's turns first come first.
   */
  private running = 0;
  private readonly waiting = new FairWaiting();
  private readonly background = new BackgroundWaiting();
  /** Foreground turns handed out since the last background one while background turns waited. */
  private foregroundInARow = 0;

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
  run<T>(
    contextId: string | undefined,
    work: () => Promise<T>,
    asker = '',
    background?: BackgroundTurn,
  ): Promise<T> {
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
    // inSlot returns to the event loop before the turn starts (its pump).
    const next = after.then(() => this.inSlot(work, asker, background));
    // The lane's tail is behind the barrier already (a lane starts from it; a barrier clears the lanes).
    const tail = next.catch(() => undefined);
    this.lanes.set(contextId, tail);
    void tail.then(() => {
      if (this.lanes.get(contextId) === tail) this.lanes.delete(contextId);
    });
    return next;
  }

  /**
   * Runs `work` once fewer than `parallel` lane turns run, when its asker's turn comes: the turns that are
   * ready are handed out by `pump` after a return to the event loop, so every turn that became ready
   * meanwhile competes (a store that answers synchronously finishes a write within one task: handing a slot
   * to the first ready turn at once would keep call order). A key that writes to 64 users at once no longer
   * puts 64 turns ahead of another key's one.
   */
  private async inSlot<T>(work: () => Promise<T>, asker: string, background?: BackgroundTurn): Promise<T> {
    await new Promise<void>((resolve) => {
      if (background === undefined) this.waiting.push(asker, resolve);
      else this.background.push(background, resolve);
      this.schedulePump();
    });
    try {
      return await work();
    } finally {
      this.running--;
      this.schedulePump();
    }
  }

  private pumpScheduled = false;

  /** After one return to the event loop, starts waiting turns while slots are free, askers in turn. */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      while (this.running < this.parallel) {
        const next = this.nextTurn();
        if (next === undefined) break;
        this.running++;
        next();
      }
    });
  }

  /**
   * The turn a free slot goes to: an urgent background turn first (a user's writes wait for it), then the
   * foreground askers in turn, a background turn after every FOREGROUND_TURNS_PER_BACKGROUND of theirs.
   */
  private nextTurn(): (() => void) | undefined {
    const urgent = this.background.shiftUrgent();
    if (urgent !== undefined) return urgent;
    if (this.background.size === 0) return this.waiting.shift();
    if (this.waiting.size > 0 && this.foregroundInARow < FOREGROUND_TURNS_PER_BACKGROUND) {
      this.foregroundInARow++;
      return this.waiting.shift();
    }
    this.foregroundInARow = 0;
    return this.background.shift();
  }
}

/** Waiting background turns, in arrival order; an urgent one is taken before the others. */
class BackgroundWaiting {
  private readonly turns: Array<{ turn: BackgroundTurn; resolve: () => void }> = [];

  get size(): number {
    return this.turns.length;
  }

  push(turn: BackgroundTurn, resolve: () => void): void {
    this.turns.push({ turn, resolve });
  }

  /** The first waiting turn that is urgent now (one per running compaction: a short scan). */
  shiftUrgent(): (() => void) | undefined {
    const at = this.turns.findIndex((waiting) => waiting.turn.urgent());
    return at < 0 ? undefined : this.turns.splice(at, 1)[0]!.resolve;
  }

  shift(): (() => void) | undefined {
    return this.turns.shift()?.resolve;
  }
}

/** Askers whose last service FairWaiting remembers beyond those waiting (the keys of a server are far fewer). */
const REMEMBERED_ASKERS = 1024;

/**
 * Waiting turns per asker, handed out to the asker served least recently (one never served first; ties in
 * arrival order), each asker's turns in arrival order: askers take turns round robin.
 */
export class FairWaiting {
  /** Askers with a waiting turn, in arrival order (a Map keeps insertion order). */
  private readonly byAsker = new Map<string, Array<() => void>>();
  /** Waiting turns of all askers. */
  private count = 0;
  /** When each asker was last served (a counter), kept after its queue empties: its next turn then waits its turn. */
  private readonly servedAt = new Map<string, number>();
  private clock = 0;

  get size(): number {
    return this.count;
  }

  push(asker: string, resolve: () => void): void {
    const turns = this.byAsker.get(asker);
    if (turns) turns.push(resolve);
    else this.byAsker.set(asker, [resolve]);
    this.count++;
  }

  /** A turn of `asker` was handed out. */
  private served(asker: string): void {
    this.servedAt.delete(asker);
    this.servedAt.set(asker, ++this.clock);
    if (this.servedAt.size > REMEMBERED_ASKERS) {
      // Forget the longest-served askers that wait for nothing (Map order: oldest service first).
      for (const old of this.servedAt.keys()) {
        if (this.servedAt.size <= REMEMBERED_ASKERS / 2) break;
        if (!this.byAsker.has(old)) this.servedAt.delete(old);
      }
    }
  }

  /** The first waiting turn of the asker served least recently. */
  shift(): (() => void) | undefined {
    let chosen: string | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const asker of this.byAsker.keys()) {
      const at = this.servedAt.get(asker) ?? 0;
      if (at < oldest) {
        oldest = at;
        chosen = asker;
      }
    }
    if (chosen === undefined) return undefined;
    const turns = this.byAsker.get(chosen)!;
    const next = turns.shift()!;
    if (turns.length === 0) this.byAsker.delete(chosen);
    this.count--;
    this.served(chosen);
    return next;
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
