import {
  type CompactionTurn,
  compactSemanticInSteps,
  recoverFailedRun,
  type StepCompactionResult,
} from './digest/incremental/compact-semantic-steps.ts';
import type { CompactionScheduler } from './digest/incremental/semantic-compaction-mark.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';

/**
 * The facade's automatic compactions: a write whose relation update reaches the 5% rule marks its context and
 * hands it here (`schedule`); the run's steps go through the facade's write queue (`turnFor`), one turn each,
 * so other writes go between them. A run that fails is finished in one turn (recoverFailedRun). close lets the
 * runs finish: a one-shot writer (a CLI add that opens, writes and closes) would otherwise stop every run it
 * starts, and the context would never be compacted. A killed process leaves the mark; the next write of the
 * context starts a new run.
 */
export class BackgroundCompactions {
  private readonly runs = new Map<string, Promise<void>>();
  private closed = false;
  private readonly finished: Array<{ contextId: string; result?: StepCompactionResult; error?: string }> = [];

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
    // One run per context at a time: a newer mark supersedes the older run at its next step.
    const run = before
      .then(() => compactSemanticInSteps(this.store, contextId, mark, this.turnFor(contextId)))
      .then(
        (result) => {
          this.note({ contextId, result });
        },
        async (error: unknown) => {
          this.note({ contextId, error: error instanceof Error ? error.message : String(error) });
          await this.turnFor(contextId)(() =>
            recoverFailedRun(this.store, contextId, mark, () => this.compactNow(contextId)),
          ).catch((again: unknown) => {
            this.note({ contextId, error: again instanceof Error ? again.message : String(again) });
          });
        },
      );
    this.runs.set(contextId, run);
    void run.finally(() => {
      if (this.runs.get(contextId) === run) this.runs.delete(contextId);
    });
  };

  /** Resolves once no run is queued or running. */
  async idle(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()]);
  }

  /** The last runs' outcomes (newest last, at most 32): what a test or an operator can read. */
  recent(): ReadonlyArray<{ contextId: string; result?: StepCompactionResult; error?: string }> {
    return this.finished;
  }

  /** Waits for the runs under way (their writes, too, are this facade's) and takes no new one. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  private note(entry: { contextId: string; result?: StepCompactionResult; error?: string }): void {
    this.finished.push(entry);
    if (this.finished.length > 32) this.finished.shift();
  }
}
