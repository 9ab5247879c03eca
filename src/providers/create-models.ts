import { GraphmemixError } from '../errors/index.ts';
import { CHAT_ROLES, type ResolvedEndpoint, type ResolvedModelConfig } from './model-config.ts';
import type { ChatModel, EmbeddingModel, ModelSet } from './model-spec.ts';
import { createOpenAICompatibleChat } from './openai-compatible-chat.ts';
import { createOpenAICompatibleEmbedding } from './openai-compatible-embedding.ts';
import type { UsageMeter } from './usage-meter.ts';
import { withUsage } from './usage-meter.ts';
import { withCache } from './with-cache.ts';
import { type ConcurrencyLimiter, createConcurrencyLimiter, withConcurrency } from './with-concurrency.ts';
import { type RetryOptions, withRetry } from './with-retry.ts';

export interface CreateModelsOptions {
  /** Cache directory; overrides config.cacheDir. No directory: no cache. */
  cacheDir?: string;
  /** Injected fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Records calls and tokens of every model made here. */
  usageMeter?: UsageMeter;
  /** Backoff settings (attempts, delays, random source, sleep). */
  retry?: RetryOptions;
}

/** In-flight calls per endpoint when no role on it sets maxConcurrency. */
export const DEFAULT_MAX_CONCURRENCY = 8;

/**
 * Builds the ModelSet from a resolved config. With nothing configured it returns {} (everything offline).
 *
 * Wrapper order, outermost first: usage -> cache -> retry -> concurrency -> HTTP client.
 * - usage outermost: one logical call counts once, cache hits are counted as cached calls;
 * - cache above retry: a hit costs no slot and no retry; only a final good reply is stored;
 * - concurrency innermost: a slot is held only while a request is on the wire, not during backoff sleeps,
 *   and the one limiter of an endpoint (keyed by baseUrl) is shared by every role that uses it, so the
 *   verifier, reader and judge on one vLLM server together respect its limit (the smallest maxConcurrency
 *   any of them sets).
 */
export function createModels(config: ResolvedModelConfig, options: CreateModelsOptions = {}): ModelSet {
  const limiters = sharedLimiters(config);
  const cacheDir = options.cacheDir ?? config.cacheDir;
  const connection = (endpoint: ResolvedEndpoint) => ({
    baseUrl: endpoint.baseUrl,
    model: endpoint.model,
    ...(endpoint.apiKey === undefined ? {} : { apiKey: endpoint.apiKey }),
    ...(endpoint.timeoutMs === undefined ? {} : { timeoutMs: endpoint.timeoutMs }),
    ...(endpoint.maxReplyBytes === undefined ? {} : { maxReplyBytes: endpoint.maxReplyBytes }),
    ...(endpoint.headers === undefined ? {} : { headers: endpoint.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });

  function wrapChat(endpoint: ResolvedEndpoint): ChatModel {
    let model = createOpenAICompatibleChat(connection(endpoint));
    model = withConcurrency(model, limiterFor(limiters, endpoint));
    model = withRetry(model, options.retry);
    if (cacheDir !== undefined) model = withCache(model, { dir: cacheDir });
    if (options.usageMeter) model = withUsage(model, options.usageMeter);
    return model;
  }

  const models: ModelSet = {};
  for (const role of CHAT_ROLES) {
    const endpoint = config[role];
    if (endpoint) models[role] = wrapChat(endpoint);
  }
  if (config.embedding) {
    const endpoint = config.embedding;
    let model: EmbeddingModel = createOpenAICompatibleEmbedding({
      ...connection(endpoint),
      supportsImages: endpoint.supportsImages,
      ...(endpoint.batchSize === undefined ? {} : { batchSize: endpoint.batchSize }),
    });
    model = withConcurrency(model, limiterFor(limiters, endpoint));
    model = withRetry(model, options.retry);
    if (cacheDir !== undefined) model = withCache(model, { dir: cacheDir });
    if (options.usageMeter) model = withUsage(model, options.usageMeter);
    models.embedding = model;
  }
  return models;
}

function sharedLimiters(config: ResolvedModelConfig): Map<string, ConcurrencyLimiter> {
  const limits = new Map<string, number>();
  for (const endpoint of [config.verifier, config.reader, config.vision, config.judge, config.embedding]) {
    if (!endpoint) continue;
    const key = endpointKey(endpoint.baseUrl);
    const current = limits.get(key);
    if (endpoint.maxConcurrency !== undefined) {
      limits.set(key, Math.min(current ?? Number.POSITIVE_INFINITY, endpoint.maxConcurrency));
    } else if (current === undefined) {
      limits.set(key, Number.POSITIVE_INFINITY);
    }
  }
  const limiters = new Map<string, ConcurrencyLimiter>();
  for (const [key, limit] of limits) {
    limiters.set(key, createConcurrencyLimiter(Number.isFinite(limit) ? limit : DEFAULT_MAX_CONCURRENCY));
  }
  return limiters;
}

function limiterFor(
  limiters: Map<string, ConcurrencyLimiter>,
  endpoint: ResolvedEndpoint,
): ConcurrencyLimiter {
  const limiter = limiters.get(endpointKey(endpoint.baseUrl));
  // Every configured endpoint got a limiter above; a miss is a bug in this file.
  if (!limiter) throw new GraphmemixError('INTERNAL', `no limiter for ${endpoint.baseUrl}`);
  return limiter;
}

function endpointKey(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}
