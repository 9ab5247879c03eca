import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import { MEDIA_PENDING_KEY } from '../incremental/relation-keys.ts';
import type { MediaDigestOutcome } from './digest-record-media.ts';

export interface MediaQueueDeps {
  store: ArchiveStore;
  digest(record: MemoryRecord): Promise<MediaDigestOutcome>;
  /**
   * Writes a digested record through the one ingest path (views, relation journal, relations), under the
   * archive's write lock, if the stored record is still the pending one this digest started from.
   */
  writeBack(record: MemoryRecord, outcome: MediaDigestOutcome): Promise<void>;
  /** Called with a job that threw (the record stays pending and is retried at the next start). */
  onError?(contextId: string, id: string, error: unknown): void;
}

/**
 * The background media digest: writes are acknowledged once the record is stored as
 * `media.status: pending`; this queue digests those records one at a time (OCR and ffmpeg are CPU-bound;
 * one at a time keeps a server responsive) and writes each result back. Crash-safe: pending records carry
 * the `media-status:pending` relation key in the same transaction as the memory, so `recover()` finds them
 * after a restart with one index lookup per context.
 */
export class MediaQueue {
  readonly #deps: MediaQueueDeps;
  readonly #jobs: { contextId: string; id: string }[] = [];
  readonly #queued = new Set<string>();
  #running: Promise<void> | undefined;
  #closed = false;
  #idleWaiters: (() => void)[] = [];

  constructor(deps: MediaQueueDeps) {
    this.#deps = deps;
  }

  get size(): number {
    return this.#jobs.length + (this.#running ? 1 : 0);
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

  /** Queues every pending record of the archive (work left by a stopped or crashed process). */
  async recover(): Promise<number> {
    let found = 0;
    for (const context of await this.#deps.store.listContexts()) {
      const pending = await this.#deps.store.findByKeys(context.id, [MEDIA_PENDING_KEY]);
      found += pending.length;
      this.enqueue(
        context.id,
        pending.map((record) => record.id),
      );
    }
    return found;
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking jobs; waits for the running one. Queued records stay pending in the store. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#jobs.length = 0;
    await this.#running;
    this.#wakeIdle();
  }

  #pump(): void {
    if (this.#running || this.#closed) return;
    const job = this.#jobs.shift();
    if (job === undefined) {
      this.#wakeIdle();
      return;
    }
    this.#running = this.#run(job).finally(() => {
      this.#queued.delete(`${job.contextId}\u0000${job.id}`);
      this.#running = undefined;
      this.#pump();
    });
  }

  async #run(job: { contextId: string; id: string }): Promise<void> {
    try {
      const record = await this.#deps.store.getMemory(job.contextId, job.id);
      if (record?.media?.status !== 'pending') return;
      const outcome = await this.#deps.digest(record);
      if (this.#closed) return;
      await this.#deps.writeBack(record, outcome);
    } catch (error) {
      this.#deps.onError?.(job.contextId, job.id, error);
    }
  }

  #wakeIdle(): void {
    if (this.size !== 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
