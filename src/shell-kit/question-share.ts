import type { MiddlewareHandler } from 'hono';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/**
 * One key's share of the question capacity by default: half of what the read workers take at once (running and
 * queued), so whatever one key asks, the others keep at least the other half. None when one key (or open mode's
 * one caller) is all there is, or when questions run on the event loop (no shared queue to fill); an explicit
 * share (`--key-questions-in-flight`) applies whenever there are keys.
 */
export function defaultQuestionShare(options: {
  keys: number;
  capacity: number | undefined;
  share?: number | undefined;
}): QuestionShare | undefined {
  if (options.keys === 0) return undefined;
  if (options.share !== undefined) return new QuestionShare(options.share);
  if (options.keys < 2 || options.capacity === undefined) return undefined;
  return new QuestionShare(Math.max(1, Math.floor(options.capacity / 2)));
}

/**
 * One key's share of the question capacity. The read workers' queue is shared by every key (64 waiting, then
 * BUSY for everyone), and the request budget counts only requests with a body: one key asking through `GET
 * /view`, or with as many POSTs as it may hold (64), took every slot, and the other keys' questions were
 * answered BUSY (`.probe`: 38 of 40 of another key's retrieves refused during a 200-connection viewer flood).
 * With a share per key, one key cannot fill the queue alone, as the body budget's share keeps it from filling that.
 */
export class QuestionShare {
  private readonly callers = new Map<string, number>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) {
      throw new GraphmemixError(
        'CONFIG',
        `the per-key question share must be a whole number >= 1, got ${max}`,
      );
    }
  }

  /** Takes a slot of `caller` (its release, to call once), or refuses with BUSY when its share is taken. */
  take(caller: string): () => void {
    const held = this.callers.get(caller) ?? 0;
    if (held >= this.max) {
      throw new GraphmemixError('BUSY', `this key has ${held} questions in progress; retry shortly`, {
        details: { retryAfterS: 1 },
      });
    }
    this.callers.set(caller, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.callers.get(caller) ?? 1) - 1;
      // One entry per caller with a question in progress: the map never outgrows the callers active now.
      if (left === 0) this.callers.delete(caller);
      else this.callers.set(caller, left);
    };
  }

  /** Runs `work` in a slot of `caller`. */
  async run<T>(caller: string, work: () => Promise<T>): Promise<T> {
    const release = this.take(caller);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** The share as route middleware (after the auth, which names the caller). */
  middleware(): MiddlewareHandler {
    return (c, next) => this.run(c.get('caller') ?? 'unknown', () => next());
  }
}
