import type { ChatModel } from '../providers/model-spec.ts';
import { callStructured } from '../providers/structured-call.ts';
import {
  correctionWithIds,
  nodeVerifierMessages,
  parseNodeVerdict,
  VERIFIER_MAX_TOKENS,
} from './node-verifier-protocol.ts';
import type { NodeVerifier, NodeVerifierInput, NodeVerifierResult } from './node-verifier-spec.ts';

/**
 * The model-backed node verifier: ONE listwise JSON call over all candidates (aliases C00..), validated,
 * 3 attempts with a correction that lists the valid ids. Never throws for a model fault.
 */
export function createModelNodeVerifier(model: ChatModel, options: { attempts?: number } = {}): NodeVerifier {
  return {
    specificationVersion: 'v1',
    name: `model:${model.modelId}`,
    kind: 'model',
    async verify(input: NodeVerifierInput): Promise<NodeVerifierResult> {
      const aliases = input.candidates.map((c) => c.alias);
      const valid = new Set(aliases);
      const result = await callStructured(
        model,
        {
          messages: nodeVerifierMessages(input.question, input.candidates),
          jsonMode: true,
          temperature: 0,
          maxTokens: VERIFIER_MAX_TOKENS,
          ...(input.signal === undefined ? {} : { signal: input.signal }),
        },
        (text) => parseNodeVerdict(text, valid),
        { attempts: options.attempts ?? 3, correction: (error) => correctionWithIds(error, aliases) },
      );
      const call = {
        model: model.modelId,
        attempts: result.attempts,
        ok: result.ok,
        cached: result.ok ? result.cached : false,
        latencyMs: result.latencyMs,
        usage: result.usage,
        ...(result.ok ? {} : { error: result.error }),
      };
      if (!result.ok) return { ok: false, error: result.error, call };
      const scores = new Map<string, number>();
      for (const candidate of input.candidates)
        scores.set(candidate.memoryId, result.value.get(candidate.alias) ?? 0);
      return { ok: true, scores, call };
    },
  };
}
