import type { ChatModel } from '../providers/model-spec.ts';
import { callVerifierModel } from './call-verifier-model.ts';
import { nodeVerifierMessages, parseNodeVerdict } from './node-verifier-protocol.ts';
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
      const { result, call } = await callVerifierModel(
        model,
        nodeVerifierMessages(input.question, input.candidates),
        (text) => parseNodeVerdict(text, valid),
        {
          aliases,
          ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
          ...(input.signal === undefined ? {} : { signal: input.signal }),
        },
      );
      if (!result.ok) return { ok: false, error: result.error, call };
      const scores = new Map<string, number>();
      for (const candidate of input.candidates)
        scores.set(candidate.memoryId, result.value.get(candidate.alias) ?? 0);
      return { ok: true, scores, call };
    },
  };
}
