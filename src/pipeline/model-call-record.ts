import type { ChatResponse } from '../providers/model-spec.ts';
import type { ModelCallRecord } from './retrieval-result.ts';

/** The trace record of one single-attempt chat call that answered (reader, caption). */
export function answeredCall(
  stage: ModelCallRecord['stage'],
  model: string,
  response: ChatResponse,
  error?: string,
): ModelCallRecord {
  return {
    stage,
    model,
    attempts: 1,
    ok: error === undefined,
    cached: response.cached,
    latencyMs: response.latencyMs,
    usage: response.usage,
    ...(error === undefined ? {} : { error }),
  };
}

/** The trace record of one single-attempt chat call that failed (after the provider's own retries). */
export function failedCall(
  stage: ModelCallRecord['stage'],
  model: string,
  startedMs: number,
  error: unknown,
): ModelCallRecord {
  return {
    stage,
    model,
    attempts: 1,
    ok: false,
    cached: false,
    latencyMs: performance.now() - startedMs,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    error: error instanceof Error ? error.message : String(error),
  };
}
