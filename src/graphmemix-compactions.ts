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
 * runs finish: a one-shot writer (a CLI add that opens, writes and closes) would otherwise stop every run it
 * starts, and the context would never be compacted. A killed process leaves the mark; the next write of the
 * context starts a new run.
 */
export class BackgroundCompactions {
  private readonly runs = new Map<string, Promise<void>>();
  private closed = false;

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
        await compactSemanticInSteps(this.store, contextId, mark, this.turnFor(contextId));
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

  /** Waits for the runs under way (their writes, too, are this facade's) and takes no new one. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
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
