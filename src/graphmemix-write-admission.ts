import { GraphmemixError } from './errors/graphmemix-error.ts';
import type { Graphmemix } from './graphmemix-api.ts';

/**
 * Write calls (imports, adds, updates, deletes, forgets, compactions) that may be unsettled at once before
 * a new one is refused with BUSY. Each queued call holds its records (up to a request body each) until its
 * turn: without a bound, a client that sends writes faster than the archive digests them grows the process
 * until it dies, and every other user's write waits behind the whole backlog.
 */
export const DEFAULT_MAX_PENDING_WRITES = 256;

/** The facade's write methods: each call counts once while it runs or waits for its turn. */
const WRITE_METHODS = [
  'ingest',
  'addMemories',
  'addMessages',
  'updateMemory',
  'deleteMemory',
  'forgetContext',
  'deleteUser',
  'compact',
] as const satisfies readonly (keyof Graphmemix)[];

/**
 * Counts unsettled write calls and refuses one more than `max` at once, before it reads or queues anything
 * (so a refused write changes nothing): BUSY, HTTP 503 with Retry-After, like a full question queue.
 */
export class WriteAdmission {
  private pending = 0;

  constructor(readonly max: number = DEFAULT_MAX_PENDING_WRITES) {
    if (!(Number.isInteger(max) || max === Number.POSITIVE_INFINITY) || max < 1) {
      throw new GraphmemixError('CONFIG', `maxPendingWrites must be a whole number >= 1, got ${max}`);
    }
  }

  /** Unsettled write calls now. */
  get inFlight(): number {
    return this.pending;
  }

  /** Runs `work` counted, or rejects with BUSY when `max` writes are unsettled already. */
  admit<T>(work: () => Promise<T>): Promise<T> {
    if (this.pending >= this.max) {
      return Promise.reject(
        new GraphmemixError('BUSY', `too many writes in progress (${this.pending}); retry shortly`, {
          details: { retryAfterS: 1, pending: this.pending },
        }),
      );
    }
    this.pending++;
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.finally(() => {
      this.pending--;
    });
  }

  /**
   * `api` with its write methods counted. A write method that calls another through `api` counts twice
   * while it runs: the facade's own compositions call the unwrapped functions instead.
   */
  wrap(api: Graphmemix): Graphmemix {
    const wrapped: Graphmemix = { ...api };
    for (const name of WRITE_METHODS) {
      const method = api[name] as (...args: unknown[]) => Promise<unknown>;
      (wrapped as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
        this.admit(() => method(...args));
    }
    return wrapped;
  }
}
