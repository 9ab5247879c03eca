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
import type { ArchiveStore } from './store/archive-store-spec.ts';

/**
 * The facade's automatic compactions: a write whose relation update reaches the 5% rule marks its context and
 * hands it here (`schedule`); the run's steps go through the facade's write queue (`turnFor`), one turn each,
 * so other writes go between them. A run that fails is finished in one turn (recoverFailedRun), and if that
 * fails too the context is marked approximate with the error (stats().knnApproximate). close lets the
 * runs finish by default: a one-shot writer (a CLI add that opens, writes and closes) would otherwise stop every
 * run it starts, and the context would never be compacted; a server's shutdown stops them instead
 * (close('stop')). A killed process leaves the mark; the next write of the context starts a new run.
 */
export class BackgroundCompactions {
  private readonly runs = new Map<string, Promise<void>>();
  private closed = false;
  /** Aborted by close('stop'): each run stops at its next step and its mark is flagged stopped. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly store: ArchiveStore,
    private readonly turnFor: (contextId: string) => CompactionTurn,
    /** Compacts the context in one turn (the failure path). */
    private readonly compactNow: (contextId: string) => Promise<unknown>,
  ) {}

  /** The scheduler the relation updates of this facade's writes get (BuildRelationsOptions.compactInBackground). */
  readonly schedule: CompactionScheduler = (contextId, mark) => {
    if (this.closed) return;
    const before = this.runs.get(contextId) ?? Promise.resolve();
    // One run per context at a time: a newer mark supersedes the older run at its next step. Live from now
    // (whileRunning), not from when the older run has ended: a write meanwhile must not take the mark for stale.
    const run = whileRunning(mark.token, async () => {
      await before;
      try {
        const { outcome } = await compactSemanticInSteps(
          this.store,
          contextId,
          mark,
          this.turnFor(contextId),
          {
            signal: this.stopping.signal,
          },
        );
        if (outcome === 'stopped') await this.release(contextId, mark);
      } catch (error) {
        await this.recover(contextId, mark, error);
      }
    });
    this.runs.set(contextId, run);
    void run.finally(() => {
      if (this.runs.get(contextId) === run) this.runs.delete(contextId);
    });
  };

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
    this.closed = true;
    if (mode === 'stop') this.stopping.abort();
    await this.idle();
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
