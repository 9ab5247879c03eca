/**
 * The size of the next step of a job done in turns of the write queue, aimed at a time budget per turn: a
 * write queued behind a step waits about that long, whatever the archive's size or the store's speed (a
 * fixed count of documents was a ~65 ms step at 10k and 0.1-0.4 s at 100k: docs/living-archive.md
 * "Round 27"). Sized from the last step's time per item, growing at most twofold a step, so one fast step
 * (pages already cached) does not make the next one long; never below `min` (a step must make progress)
 * nor above `max`.
 */
export class StepSizer {
  private size: number;

  constructor(
    private readonly budgetMs: number,
    private readonly min: number,
    private readonly max: number,
    first: number = min,
  ) {
    this.size = clamp(first, min, max);
  }

  /** Items for the next step. */
  get next(): number {
    return this.size;
  }

  /** After a step of `items` items that took `ms`. */
  took(items: number, ms: number): void {
    if (!(items > 0) || !(ms >= 0)) return;
    const aimed = Math.floor((this.budgetMs * items) / Math.max(ms, 1e-3));
    this.size = clamp(Math.min(aimed, 2 * this.size), this.min, this.max);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.floor(value)));
}
