import type { ArchiveStore, PendingMediaRef } from '../../store/archive-store-spec.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { BACKGROUND_RETRY_DELAYS_MS, RetryTimers } from '../retry-timers.ts';
import type { MediaDigestOutcome } from './digest-record-media.ts';

export interface MediaQueueDeps {
  store: ArchiveStore;
  digest(record: MemoryRecord): Promise<MediaDigestOutcome>;
  /**
   * Writes a digested record through the one ingest path (views, relation journal, relations), under the
   * archive's write lock, if the stored record is still the pending one this digest started from.
   */
  writeBack(record: MemoryRecord, outcome: MediaDigestOutcome): Promise<void>;
  /**
   * Called with a job that threw, or a recovery page that could not be read (contextId and id ''): the record
   * stays pending, and the job (or the page) is tried again after each of `retryDelaysMs`, then at the next
   * start.
   */
  onError?(contextId: string, id: string, error: unknown): void;
  /** Waits before the retries of a failed job or recovery page (default BACKGROUND_RETRY_DELAYS_MS). */
  retryDelaysMs?: readonly number[];
}

/** The retry key of the recovery's page reads (job keys are context NUL id, never empty). */
const RECOVERY_KEY = '';

/**
 * The background media digest: writes are acknowledged once the record is stored as
 * `media.status: pending`; this queue digests those records one at a time (OCR and ffmpeg are CPU-bound;
 * one at a time keeps a server responsive) and writes each result back. Crash-safe: pending records carry
 * the `media-status:pending` relation key in the same transaction as the memory, so `recover()` finds them
 * after a restart through `ArchiveStore.listPendingMedia` (a partial index of the pending rows): a page of
 * RECOVER_PAGE at a time, the next page read when the queue runs dry. Opening an archive never lists its
 * contexts and reads nothing proportional to its size.
 */
export class MediaQueue {
  /** Pending records read per recovery page. */
  static readonly RECOVER_PAGE = 256;
  readonly #deps: MediaQueueDeps;
  /** Where the next recovery page starts; undefined when recovery is not running or has read everything. */
  #cursor: { after?: PendingMediaRef } | undefined;
  #fetching: Promise<number> | undefined;
  readonly #jobs: { contextId: string; id: string }[] = [];
  readonly #queued = new Set<string>();
  #running: Promise<void> | undefined;
  #closed = false;
  #idleWaiters: (() => void)[] = [];
  /** Failed jobs' (and the recovery's, key '') planned retries. */
  readonly #retries: RetryTimers;

  constructor(deps: MediaQueueDeps) {
    this.#deps = deps;
    this.#retries = new RetryTimers(deps.retryDelaysMs ?? BACKGROUND_RETRY_DELAYS_MS);
  }

  /** Retries planned now (failed jobs and a failed recovery page). */
  retriesPlanned(): number {
    return this.#retries.planned();
  }

  get size(): number {
    return this.#jobs.length + (this.#running ? 1 : 0) + (this.#fetching || this.#cursor ? 1 : 0);
  }

  enqueue(contextId: string, ids: readonly string[]): void {
    if (this.#closed) return;
    for (const id of ids) {
      const key = `${contextId}\u0000${id}`;
      if (this.#queued.has(key)) continue;
      this.#queued.add(key);
      this.#jobs.push({ contextId, id });
    }
    this.#pump();
  }

  /**
   * Starts queueing every pending record of the archive (work left by a stopped or crashed process): reads
   * the first page now and the next ones as the queue drains. Returns how many the first page held.
   */
  async recover(): Promise<number> {
    if (this.#closed) return 0;
    this.#cursor = {};
    return this.#fetchPage();
  }

  #fetchPage(): Promise<number> {
    if (this.#fetching) return this.#fetching;
    const cursor = this.#cursor;
    if (cursor === undefined || this.#closed) return Promise.resolve(0);
    const limit = MediaQueue.RECOVER_PAGE;
    this.#fetching = this.#deps.store
      .listPendingMedia(cursor.after === undefined ? { limit } : { limit, after: cursor.after })
      .then(
        (page) => {
          this.#cursor = page.length < limit ? undefined : { after: page[page.length - 1]! };
          this.#retries.reset(RECOVERY_KEY);
          return page;
        },
        (error: unknown) => {
          // Recovery ends here; it starts over from this page after the next delay.
          this.#cursor = undefined;
          this.#retries.failed(RECOVERY_KEY, () => this.#resume(cursor), !this.#closed);
          throw error;
        },
      )
      .then((page) => {
        for (const ref of page) this.enqueue(ref.contextId, [ref.id]);
        return page.length;
      })
      .finally(() => {
        this.#fetching = undefined;
        this.#pump();
      });
    return this.#fetching;
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking jobs; waits for the running one. Queued records (and planned retries) stay pending in the store. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#retries.clear();
    this.#jobs.length = 0;
    this.#cursor = undefined;
    await this.#fetching?.catch(() => 0);
    await this.#running;
    this.#wakeIdle();
  }

  #pump(): void {
    if (this.#running || this.#closed) return;
    const job = this.#jobs.shift();
    if (job === undefined) {
      if (this.#cursor !== undefined) {
        // The next recovery page; a failing store read ends recovery (the records stay pending).
        this.#fetchPage().catch((error: unknown) => this.#deps.onError?.('', '', error));
        return;
      }
      this.#wakeIdle();
      return;
    }
    this.#running = this.#run(job).finally(() => {
      this.#queued.delete(`${job.contextId}\u0000${job.id}`);
      this.#running = undefined;
      this.#pump();
    });
  }

  /** Recovery read again from `cursor` (a failed page's retry), unless closed or already reading. */
  #resume(cursor: { after?: PendingMediaRef }): void {
    if (this.#closed || this.#cursor !== undefined || this.#fetching) return;
    this.#cursor = cursor;
    this.#pump();
  }

  async #run(job: { contextId: string; id: string }): Promise<void> {
    const key = `${job.contextId}\u0000${job.id}`;
    try {
      const record = await this.#deps.store.getMemory(job.contextId, job.id);
      if (record?.media?.status === 'pending') {
        const outcome = await this.#deps.digest(record);
        if (this.#closed) return;
        await this.#deps.writeBack(record, outcome);
      }
      this.#retries.reset(key);
    } catch (error) {
      this.#deps.onError?.(job.contextId, job.id, error);
      const count = this.#retries.failed(key, () => this.enqueue(job.contextId, [job.id]), !this.#closed);
      // Past its last retry the job waits for the next start, which counts afresh: no count kept per failed
      // record for the life of the process.
      if (count.delayMs === undefined) this.#retries.reset(key);
    }
  }

  #wakeIdle(): void {
    if (this.size !== 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
