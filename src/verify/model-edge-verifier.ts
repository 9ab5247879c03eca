import type { ChatModel } from '../providers/model-spec.ts';
import { callVerifierModel } from './call-verifier-model.ts';
import { ecvMessages, normalizeJudgement, parseEcvVerdict, versionRole } from './ecv-protocol.ts';
import type { EdgeVerifier, EdgeVerifierInput, EdgeVerifierResult } from './edge-verifier-spec.ts';

/**
 * The model-backed edge verifier (ECV): one listwise JSON call over the eligible anchor-candidate pairs,
 * validated (complete coverage, no duplicates, roles and scores in range), 3 attempts with a correction that
 * lists the candidate ids, then the normalisation rules and role gating (a supersedes pair is never
 * redundant: versionRole). No eligible pair: no call.
 */
export function createModelEdgeVerifier(model: ChatModel, options: { attempts?: number } = {}): EdgeVerifier {
  return {
    specificationVersion: 'v1',
    name: `model:${model.modelId}`,
    kind: 'model',
    async verify(input: EdgeVerifierInput): Promise<EdgeVerifierResult> {
      if (input.candidates.length === 0) return { ok: true, judgements: [] };
      const aliases = input.candidates.map(({ candidate }) => candidate.alias);
      const { result, call } = await callVerifierModel(
        model,
        ecvMessages(input),
        (text) => parseEcvVerdict(text, input),
        {
          aliases,
          ...(options.attempts === undefined ? {} : { attempts: options.attempts }),
          ...(input.signal === undefined ? {} : { signal: input.signal }),
        },
      );
      if (!result.ok) return { ok: false, error: result.error, call };
      const relationsOf = new Map(
        input.candidates.map(({ candidate, relations }) => [candidate.memoryId, relations]),
      );
      const judgements = result.value.map((raw) => {
        const relations = relationsOf.get(raw.candidateId) ?? [];
        return normalizeJudgement(versionRole(raw, relations), new Set(relations.map((r) => r.anchorId)));
      });
      return { ok: true, judgements, call };
    },
  };
}
