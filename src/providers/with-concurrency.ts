import { GraphmemixError } from '../errors/index.ts';
import type { ChatModel, EmbeddingModel } from './model-spec.ts';

/** A limit of in-flight calls. Share one limiter between every model on the same endpoint. */
export interface ConcurrencyLimiter {
  readonly limit: number;
  readonly active: number;
  readonly waiting: number;
  /** Runs `task` when a slot is free. A caller that aborts while queued leaves the queue (rejects). */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

export function createConcurrencyLimiter(limit: number): ConcurrencyLimiter {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new GraphmemixError('CONFIG', `concurrency limit must be a positive integer, got ${limit}`, {
      location: { field: 'maxConcurrency' },
    });
  }
  let active = 0;
  const queue: Array<() => void> = [];

  function release(): void {
    active--;
    const next = queue.shift();
    if (next) next();
  }

  async function acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    if (active < limit) {
      active++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        active++;
        resolve();
      };
      function onAbort(): void {
        const index = queue.indexOf(grant);
        if (index !== -1) queue.splice(index, 1);
        reject(signal?.reason);
      }
      queue.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  return {
    limit,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    async run(task, signal) {
      await acquire(signal);
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}

/** Wraps a model so each call holds one slot of `limiter` (or of a new limiter of that size). */
export function withConcurrency(model: ChatModel, limiter: ConcurrencyLimiter | number): ChatModel;
export function withConcurrency(model: EmbeddingModel, limiter: ConcurrencyLimiter | number): EmbeddingModel;
export function withConcurrency(
  model: ChatModel | EmbeddingModel,
  limiter: ConcurrencyLimiter | number,
): ChatModel | EmbeddingModel {
  const shared = typeof limiter === 'number' ? createConcurrencyLimiter(limiter) : limiter;
  const base = { specificationVersion: 'v1', provider: model.provider, modelId: model.modelId } as const;
  if ('chat' in model) {
    return { ...base, chat: (request) => shared.run(() => model.chat(request), request.signal) };
  }
  return {
    ...base,
    supportsImages: model.supportsImages,
    embed: (inputs, options) => shared.run(() => model.embed(inputs, options), options?.signal),
  };
}
