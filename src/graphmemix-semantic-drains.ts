import type { BuildRelationsOptions } from './digest/build-relations.ts';
import {
  type DrainFailure,
  failureMessage,
  readDrainFailure,
  writeDrainFailure,
} from './digest/incremental/drain-failure-mark.ts';
import { DRAIN_IDS_PER_TURN, drainSemanticBacklog } from './digest/incremental/drain-semantic-backlog.ts';
import {
  compactionLive,
  contextsWithBacklog,
  readCompactionMark,
} from './digest/incremental/semantic-compaction-mark.ts';
import { BACKGROUND_RETRY_DELAYS_MS, RetryTimers } from './digest/retry-timers.ts';
import type { WriteQueue } from './graphmemix-write-queue.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';

/**
 * The facade's after-write semantic updates (`semanticUpdates: 'after-write'`, the default for adds, updates and
 * deletes since round 38; imports keep theirs in the write): a write leaves its changed ids
 * in the context's semantic backlog and asks here for a drain, which runs as a turn of the context through the
 * facade's write queue right after it (in the asker's lane: a key's drains take turns like its writes). At
 * most one drain per context waits in the queue: writes landing before it runs are applied by it. A drain
 * takes at most DRAIN_IDS_PER_TURN ids; while rows are left it queues the next turn. A drain that fails leaves
 * its rows (its unit rolled back): questions stay flagged `semantic_pending`, the failure is written to the
 * store (drain-failure-mark.ts: `userStats().semanticPending.drainFailure` in every process), and the drain is
 * tried again after each of BACKGROUND_RETRY_DELAYS_MS in turn (a disk that filled up, a lock another process
 * held); past the last one the context's next write, or the next open, asks again. Rows a stopped or killed
 * process left are found at open (`recover`: one list of the backlog's keys, proportional to the rows, not to
 * the archive).
 */
export class SemanticDrains {
  /** Contexts whose drain is queued and not yet started. */
  private readonly queued = new Set<string>();
  /** Every drain queued or running (idle / close wait for them). */
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;
  /** The last failure per context (kept until its next drain succeeds). */
  readonly failures = new Map<string, unknown>();
  /** Contexts whose failure mark another process may have left (recover): a success drops it. */
  private readonly maybeMarked = new Set<string>();
  /** Failures counted and retries planned, per context. */
  private readonly retries: RetryTimers;

  constructor(
    private readonly store: ArchiveStore,
    private readonly queue: Pick<WriteQueue, 'forContext'>,
    /** The relation options a drain's update gets (the facade's compaction scheduler). */
    private readonly options: () => BuildRelationsOptions,
    /** Ids a drain turn applies at most. */
    private readonly perTurn = DRAIN_IDS_PER_TURN,
    /** Waits before the automatic retries of a failed drain (tests shorten them). */
    retryDelaysMs: readonly number[] = BACKGROUND_RETRY_DELAYS_MS,
  ) {
    this.retries = new RetryTimers(retryDelaysMs);
  }

  /** Queues a drain of `contextId` unless one is queued already (a planned retry then runs now). */
  schedule(contextId: string, lane?: string): void {
    if (this.stopped || this.queued.has(contextId)) return;
    this.retries.cancel(contextId);
    this.queued.add(contextId);
    const drain = this.queue.forContext(
      contextId,
      async () => {
        // Started: a write after this turn appends rows this drain does not take, and must queue its own.
        this.queued.delete(contextId);
        if (this.stopped) return false;
        try {
          const report = await drainSemanticBacklog(this.store, contextId, this.options(), this.perTurn);
          await this.succeeded(contextId);
          return report.left;
        } catch (error) {
          // Recorded in this turn (the writer is ours); a store that cannot take it either keeps the error here.
          await this.failed(contextId, error, lane).catch(() => undefined);
          throw error;
        }
      },
      { asker: lane },
    );
    const settled = drain.then(
      (left) => {
        if (left) this.schedule(contextId, lane);
      },
      (error: unknown) => {
        this.queued.delete(contextId);
        this.failures.set(contextId, error);
      },
    );
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
  }

  /** After a drain turn that succeeded: the failure, if one was recorded, is gone. */
  private async succeeded(contextId: string): Promise<void> {
    this.failures.delete(contextId);
    const failedHere = this.retries.reset(contextId);
    const leftByAnother = this.maybeMarked.delete(contextId);
    if ((failedHere || leftByAnother) && (await readDrainFailure(this.store, contextId)) !== undefined)
      await writeDrainFailure(this.store, contextId, undefined);
  }

  /** After a drain turn that threw: the failure recorded, the next attempt planned while attempts are left. */
  private async failed(contextId: string, error: unknown, lane: string | undefined): Promise<void> {
    const now = new Date();
    const count = this.retries.failed(contextId, () => this.schedule(contextId, lane), !this.stopped, now);
    const failure: DrainFailure = {
      error: failureMessage(error),
      since: count.since,
      at: now.toISOString(),
      attempts: count.attempts,
      ...(count.delayMs === undefined
        ? {}
        : { nextRetryAt: new Date(now.getTime() + count.delayMs).toISOString() }),
    };
    await writeDrainFailure(this.store, contextId, failure);
  }

  /**
   * Queues a drain for every context with backlog rows and no compaction run's mark (rows a stopped process
   * left), in the background; idle and close wait for it. A failure is retried as a write's drain is.
   */
  recover(): void {
    const found = (async () => {
      for (const contextId of await contextsWithBacklog(this.store)) {
        if (this.stopped) return;
        // A live run replays the backlog itself; a dead one's (a killed process) is restarted by the drain.
        const mark = await readCompactionMark(this.store, contextId);
        if (mark !== undefined && compactionLive(mark)) continue;
        this.maybeMarked.add(contextId);
        this.schedule(contextId);
      }
    })().catch(() => undefined);
    this.inFlight.add(found);
    void found.finally(() => this.inFlight.delete(found));
  }

  /** Resolves once no drain is queued or running (the ones queued meanwhile included). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** True when no drain is queued or running. */
  settled(): boolean {
    return this.inFlight.size === 0;
  }

  /** Planned retries (a failed drain's next attempt), not counting queued or running drains. */
  retriesPlanned(): number {
    return this.retries.planned();
  }

  /**
   * 'finish' waits for the drains; 'stop' lets the queued ones pass without work (their rows stay for the next
   * open). Either way planned retries are dropped: their rows stay for the next open too.
   */
  async close(mode: 'finish' | 'stop'): Promise<void> {
    if (mode === 'stop') this.stopped = true;
    await this.idle();
    this.stopped = true;
    this.retries.clear();
  }
}
