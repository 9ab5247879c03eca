import { isGraphmemixError } from '../errors/index.ts';
import type { ChatModel, EmbeddingModel } from './model-spec.ts';

export interface RetryOptions {
  /** Transport attempts in total, the first included (default 4). */
  maxAttempts?: number;
  /** First backoff before jitter (default 500 ms); doubles per retry. */
  baseDelayMs?: number;
  /** Cap of one backoff, and of an honoured Retry-After (default 30 s). */
  maxDelayMs?: number;
  /** Random source in [0, 1) for jitter; injected so runs can be replayed (default Math.random). */
  random?: () => number;
  /** Sleep; injected so tests need not wait. Must reject when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY_ATTEMPTS = 4;

/**
 * Retries transport faults: only MODEL_UNAVAILABLE errors whose details say `retryable: true` (network,
 * dropped connection, timeout, 408, 429, 5xx). Never retries other 4xx, replies without content, or the
 * caller's abort. Backoff: min(maxDelay, base * 2^(n-1)) scaled by a jitter factor in [0.5, 1); a
 * Retry-After header (details.retryAfterMs) is honoured instead when present, capped at maxDelay.
 */
export function withRetry(model: ChatModel, options?: RetryOptions): ChatModel;
export function withRetry(model: EmbeddingModel, options?: RetryOptions): EmbeddingModel;
export function withRetry(
  model: ChatModel | EmbeddingModel,
  options: RetryOptions = {},
): ChatModel | EmbeddingModel {
  const run = retrying(options);
  if ('chat' in model) {
    return { ...describeModel(model), chat: (request) => run(() => model.chat(request), request.signal) };
  }
  return {
    ...describeModel(model),
    supportsImages: model.supportsImages,
    embed: (inputs, embedOptions) => run(() => model.embed(inputs, embedOptions), embedOptions?.signal),
  };
}

/** The delay before retry number `retry` (1-based) for a given error; exported for tests. */
export function retryDelayMs(retry: number, error: unknown, options: RetryOptions = {}): number {
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 30_000;
  const retryAfter = isGraphmemixError(error) ? error.details?.retryAfterMs : undefined;
  if (typeof retryAfter === 'number' && Number.isFinite(retryAfter))
    return Math.min(max, Math.max(0, retryAfter));
  const random = options.random ?? Math.random;
  const exponential = Math.min(max, base * 2 ** (retry - 1));
  return exponential * (0.5 + 0.5 * random());
}

export function isRetryable(error: unknown): boolean {
  return isGraphmemixError(error) && error.code === 'MODEL_UNAVAILABLE' && error.details?.retryable === true;
}

function retrying(options: RetryOptions) {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_RETRY_ATTEMPTS));
  const sleep = options.sleep ?? abortableSleep;
  return async <T>(call: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (attempt >= maxAttempts || !isRetryable(error) || signal?.aborted) throw error;
        await sleep(retryDelayMs(attempt, error, options), signal);
      }
    }
  };
}

function describeModel(model: ChatModel | EmbeddingModel) {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
  } as const;
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
