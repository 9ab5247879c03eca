import type { ChatModel, EmbeddingModel, TokenUsage } from './model-spec.ts';

/** Calls and tokens of one model id. Cached calls spent no tokens; failed calls threw. */
export interface ModelUsage extends TokenUsage {
  calls: number;
  cachedCalls: number;
  failedCalls: number;
}

export interface UsageSnapshot {
  byModel: Record<string, ModelUsage>;
  total: ModelUsage;
}

export interface UsageMeter {
  record(modelId: string, usage: TokenUsage, outcome: { cached: boolean; failed: boolean }): void;
  /** A copy of the counts so far (later calls do not change it). */
  snapshot(): UsageSnapshot;
  reset(): void;
}

export function createUsageMeter(): UsageMeter {
  let byModel = new Map<string, ModelUsage>();
  return {
    record(modelId, usage, outcome) {
      const entry = byModel.get(modelId) ?? emptyUsage();
      byModel.set(modelId, entry);
      entry.calls++;
      if (outcome.cached) entry.cachedCalls++;
      if (outcome.failed) entry.failedCalls++;
      entry.promptTokens += usage.promptTokens;
      entry.completionTokens += usage.completionTokens;
      entry.totalTokens += usage.totalTokens;
    },
    snapshot() {
      const total = emptyUsage();
      const copy: Record<string, ModelUsage> = {};
      for (const [id, entry] of byModel) {
        copy[id] = { ...entry };
        for (const key of Object.keys(total) as (keyof ModelUsage)[]) total[key] += entry[key];
      }
      return { byModel: copy, total };
    },
    reset() {
      byModel = new Map();
    },
  };
}

const NO_USAGE: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * Records every call of `model` in `meter` under its model id. Put it outermost (above the cache) so that
 * cache hits are counted as cached calls; above the retry wrapper, one logical call counts once.
 */
export function withUsage(model: ChatModel, meter: UsageMeter): ChatModel;
export function withUsage(model: EmbeddingModel, meter: UsageMeter): EmbeddingModel;
export function withUsage(model: ChatModel | EmbeddingModel, meter: UsageMeter): ChatModel | EmbeddingModel {
  const base = { specificationVersion: 'v1', provider: model.provider, modelId: model.modelId } as const;
  const failed = (error: unknown): never => {
    meter.record(model.modelId, NO_USAGE, { cached: false, failed: true });
    throw error;
  };
  if ('chat' in model) {
    return {
      ...base,
      chat: async (request) => {
        const response = await model.chat(request).catch(failed);
        meter.record(model.modelId, response.usage, { cached: response.cached, failed: false });
        return response;
      },
    };
  }
  return {
    ...base,
    supportsImages: model.supportsImages,
    embed: async (inputs, options) => {
      const response = await model.embed(inputs, options).catch(failed);
      meter.record(model.modelId, response.usage, { cached: response.cached, failed: false });
      return response;
    },
  };
}

function emptyUsage(): ModelUsage {
  return { calls: 0, cachedCalls: 0, failedCalls: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 };
}
