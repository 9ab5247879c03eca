import { writeApproximateMark } from './digest/incremental/approximate-knn-mark.ts';
import {
  type CompactionTurn,
  compactSemanticInSteps,
  recoverFailedRun,
} from './digest/incremental/compact-semantic-steps.ts';
import {
  type CompactionScheduler,
  readCompactionMark,
  type SemanticCompactionMark,
  whileRunning,
  writeCompactionMark,
} from './digest/incremental/semantic-compaction-mark.ts';
import { compactionLimit } from './digest/incremental/semantic-needs-compaction.ts';
import type { WriteQueue } from './graphmemix-write-queue.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';

/**
 * A run's backlog as this process counts it: the ids its context's writes deferred, less those its replay
 * applied; `limit` the compaction rule's for the context; `hold` the context's writes held (or asked to be).
 */
interface Backlog {
  ids: number;
  limit: number;
  hold?: 'asked' | (() => void) | undefined;
  /** The promise the queue holds the context with while `hold` is taken (the run's own turns pass it). */
  holding?: Promise<void> | undefined;
}

/**
 * The facade's automatic compactions: a write whose relation update reaches the 5% rule marks its context and
 * hands it here (`schedule`); the run's steps go through the facade's write queue (`turnFor`), one turn each,
 * so other writes go between them. A run that fails is finished in one turn (recoverFailedRun), and if that
 * fails too the context is marked approximate with the error (stats().knnApproximate). close lets the
 * runs finish by default: a one-shot writer (a CLI add that opens, writes and closes) would otherwise stop every
 * run it starts, and the context would never be compacted; a server's shutdown stops them instead
 * (close('stop')). A killed process leaves the mark; the next write of the context starts a new run.
 *
 * While a run is live the context's writes only append their ids to its backlog, which costs them next to
 * nothing, and the run applied the backlog in ~20 ms steps. A user writing faster than that (a flood of adds)
 * outran the run without bound: its backlog grew by a write's ids per step and shrank by a few, and the run
 * never ended while the writes went on (round 32). So once the backlog this process counts reaches the rule's
 * limit for the context (max(16, 5% of it): what the rule lets drift between compactions), the context's new
 * writes wait (WriteQueue.holding: other users' writes go on) while the run's steps go on back to back, until
 * its replay brings the backlog under the limit again: a user's writes cannot outrun their own compaction.
 */
export class BackgroundCompactions {
  private readonly runs = new Map<string, Promise<void>>();
  private closed = false;
  /** Aborted by close('stop'): each run stops at its next step and its mark is flagged stopped. */
  private readonly stopping = new AbortController();

  /** Per context with a run queued or running. */
  private readonly backlogs = new Map<string, Backlog>();

  constructor(
    private readonly store: ArchiveStore,
    /** The facade's write queue: a run's steps are turns of its context. */
    private readonly queue: Pick<WriteQueue, 'forContext' | 'turn' | 'holding'>,
    /** Compacts the context in one turn (the failure path). */
    private readonly compactNow: (contextId: string) => Promise<unknown>,
    /** The clock of the cooldowns, in milliseconds (tests). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The scheduler the relation updates of this facade's writes get (BuildRelationsOptions.compactInBackground). */
  readonly schedule: CompactionScheduler = Object.assign(
    (contextId: string, mark: SemanticCompactionMark) => this.start(contextId, mark),
    {
      deferred: (contextId: string, ids: number) => this.deferred(contextId, ids),
      ready: (contextId: string) => this.ready(contextId),
    },
  );

  /** Per context whose last run ended recently: when it may start the next one (`now`). */
  private readonly cooldowns = new Map<string, number>();

  /**
   * A context may start a run once as long as its last run took has passed since it ended: compactions then
   * take at most about half of a user's writing time, however fast it writes (a run costs the whole user;
   * the 5% rule alone would start the next one a few writes of a flood later).
   */
  private ready(contextId: string): boolean {
    const until = this.cooldowns.get(contextId);
    if (until === undefined) return true;
    if (this.now() < until) return false;
    this.cooldowns.delete(contextId);
    return true;
  }

  private start(contextId: string, mark: SemanticCompactionMark): void {
    if (this.closed) return;
    const before = this.runs.get(contextId) ?? Promise.resolve();
    if (!this.backlogs.has(contextId)) {
      const backlog: Backlog = { ids: 0, limit: Number.POSITIVE_INFINITY };
      this.backlogs.set(contextId, backlog);
      // Until the context's size is read no write is held.
      this.readLimit(contextId, backlog);
    }
    // One run per context at a time: a newer mark supersedes the older run at its next step. Live from now
    // (whileRunning), not from when the older run has ended: a write meanwhile must not take the mark for stale.
    const run = whileRunning(mark.token, async () => {
      await before;
      try {
        const { outcome, seconds } = await compactSemanticInSteps(
          this.store,
          contextId,
          mark,
          this.turnFor(contextId),
          {
            signal: this.stopping.signal,
            onReplayed: (ids) => {
              const backlog = this.backlogs.get(contextId);
              if (backlog === undefined) return;
              backlog.ids = Math.max(0, backlog.ids - ids);
              this.holdWhileOver(contextId, backlog);
              // The user grows while a flood keeps the run replaying: its limit follows.
              this.readLimit(contextId, backlog);
            },
          },
        );
        if (outcome === 'done') this.coolDown(contextId, seconds);
        if (outcome === 'stopped') await this.release(contextId, mark);
      } catch (error) {
        await this.recover(contextId, mark, error);
      }
    });
    this.runs.set(contextId, run);
    void run.finally(() => {
      if (this.runs.get(contextId) !== run) return;
      this.runs.delete(contextId);
      // The last run of the context has ended: its backlog is applied (done), or another compaction, a forget or
      // the next write's run takes it over; its writes are let go.
      const backlog = this.backlogs.get(contextId);
      this.backlogs.delete(contextId);
      if (backlog !== undefined) this.letGo(backlog);
    });
  }

  private coolDown(contextId: string, seconds: number): void {
    const now = this.now();
    // Expired entries go as new ones come: the map holds the contexts compacted within the longest run's time.
    if (this.cooldowns.size >= 1024) {
      for (const [context, until] of this.cooldowns) if (until <= now) this.cooldowns.delete(context);
    }
    this.cooldowns.set(contextId, now + seconds * 1000);
  }

  /** The rule's limit for the context's size, from its counter row (one read, not awaited). */
  private readLimit(contextId: string, backlog: Backlog): void {
    void this.store.countMemories(contextId).then(
      (memories) => {
        backlog.limit = compactionLimit(memories);
        this.holdWhileOver(contextId, backlog);
      },
      () => undefined,
    );
  }

  /** A relation update of this process left `ids` in the backlog of `contextId`'s run. */
  private deferred(contextId: string, ids: number): void {
    const backlog = this.backlogs.get(contextId);
    if (backlog === undefined) return;
    backlog.ids += ids;
    this.holdWhileOver(contextId, backlog);
  }

  /** Holds the context's writes while its backlog is at its limit, lets them go once it is under it. */
  private holdWhileOver(contextId: string, backlog: Backlog): void {
    if (backlog.ids < backlog.limit || this.closed) {
      this.letGo(backlog);
      return;
    }
    if (backlog.hold !== undefined) return;
    backlog.hold = 'asked';
    // Taken once no import holds the context (queue.holding waits for it); let go at once if no longer needed.
    void this.queue.holding(contextId, () => {
      const holding = new Promise<void>((resolve) => {
        if (this.backlogs.get(contextId) !== backlog || backlog.hold !== 'asked') resolve();
        else backlog.hold = resolve;
      });
      if (typeof backlog.hold === 'function') backlog.holding = holding;
      return holding;
    });
  }

  private letGo(backlog: Backlog): void {
    const hold = backlog.hold;
    backlog.hold = undefined;
    backlog.holding = undefined;
    if (typeof hold === 'function') hold();
  }

  /**
   * A turn of the context for the run's steps: through the queue like a write, after an import holding the
   * context, but never waiting for the run's own hold on the context's writes. Background work (the facade's
   * per-user lanes, both backends): a step waits behind the waiting writes, except while the run holds its
   * user's writes, when it goes first. In call order with the other runs' steps, a held user waited for all of
   * them (200 users on PostgreSQL, bench/soak-probe.ts: a held user's writes took 22-101 s).
   */
  private turnFor(contextId: string): CompactionTurn {
    const background = { urgent: () => this.backlogs.get(contextId)?.hold !== undefined };
    return (work) =>
      this.queue.forContext(contextId, work, {
        own: (hold) => hold === this.backlogs.get(contextId)?.holding,
        background,
      });
  }

  /** Resolves once no run is queued or running. */
  async idle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()]);
  }

  /**
   * Takes no new run, then either waits for the runs under way (`finish`: their writes, too, are this facade's;
   * a one-shot writer's compaction would otherwise never end) or stops each at its next step (`stop`: a
   * server's shutdown, which must not wait minutes). A stopped run leaves its mark flagged stopped, so the
   * context's next write, in any process, starts a new run at once (it redoes the whole compaction; the
   * backlog is kept).
   */
  async close(mode: 'finish' | 'stop' = 'finish'): Promise<void> {
    if (mode === 'stop') this.stopping.abort();
    this.shut();
    await this.idle();
  }

  /**
   * Takes no new run, stops each run at its next step and lets go the writes they hold, without waiting
   * (a server's shutdown: its queued writes then only append to the backlog, kept for the next run).
   */
  stop(): void {
    this.stopping.abort();
    this.shut();
  }

  /** No new run, and no write held from now on. */
  private shut(): void {
    this.closed = true;
    for (const backlog of this.backlogs.values()) this.letGo(backlog);
  }

  /** A stopped run's mark, still its own, flagged stopped (one turn; never throws: close awaits it). */
  private async release(contextId: string, mark: SemanticCompactionMark): Promise<void> {
    await this.turnFor(contextId)(async () => {
      const current = await readCompactionMark(this.store, contextId);
      if (current?.token === mark.token) {
        await writeCompactionMark(this.store, contextId, { ...current, stoppedAt: new Date().toISOString() });
      }
    }).catch(() => undefined);
  }

  /**
   * A failed run: finished in one turn; if that fails too, the context is marked approximate with the error,
   * which its stats and later ingest reports show (an exact compaction clears it). Never throws: nobody awaits
   * a background run but idle().
   */
  private async recover(contextId: string, mark: SemanticCompactionMark, error: unknown): Promise<void> {
    try {
      await this.turnFor(contextId)(() =>
        recoverFailedRun(this.store, contextId, mark, () => this.compactNow(contextId)),
      );
    } catch (again) {
      // The mark goes too: left, every later write would start a run that fails the same way. The context's
      // semantic updates go on incrementally; the backlog rows stay until a full compaction (which reads
      // every record, so nothing in them is lost).
      await this.turnFor(contextId)(async () => {
        await writeApproximateMark(this.store, contextId, {
          reason: 'compaction-failed',
          since: new Date().toISOString(),
          documents: 0,
          error: `${messageOf(error)}; its recovery: ${messageOf(again)}`,
        });
        if ((await readCompactionMark(this.store, contextId))?.token === mark.token) {
          await writeCompactionMark(this.store, contextId, undefined);
        }
      }).catch(() => undefined);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
