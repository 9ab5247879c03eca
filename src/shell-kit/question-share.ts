import type { MiddlewareHandler } from 'hono';
import { GraphmemixError } from '../errors/graphmemix-error.ts';

/** Questions (search, retrieve, answer, the viewer page) one key may have in progress at once by default. */
export const DEFAULT_CALLER_QUESTIONS = 16;

/**
 * One key's share of the question capacity. The read workers' queue is shared by every key (64 waiting, then
 * BUSY for everyone), and the request budget counts only requests with a body: one key asking through `GET
 * /view`, or with as many POSTs as it may hold (64), took every slot, and the other keys' questions were
 * answered BUSY (`.probe`: 38 of 40 of another key's retrieves refused during a 200-connection viewer flood).
 * With a share per key, several keys are needed to fill the queue, as the body budget needs several to fill it.
 */
export class QuestionShare {
  private readonly callers = new Map<string, number>();

  constructor(readonly max: number = DEFAULT_CALLER_QUESTIONS) {
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
