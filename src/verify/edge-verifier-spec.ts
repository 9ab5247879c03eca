import type { EdgeRole } from '../core/candidate-graph.ts';
import type { SchemaRelationType } from '../types/relation.ts';
import type { VerifierCall, VerifierCandidate, VerifierQuestion } from './verifier-input.ts';

/** One schema relation between a candidate and an anchor (semantic_knn is never eligible). */
export interface EligibleRelation {
  anchorId: string;
  relationTypes: SchemaRelationType[];
}

export interface EdgeVerifierInput {
  question: VerifierQuestion;
  /** Anchors (the first pool members) in pool order. */
  anchors: VerifierCandidate[];
  /** Candidates that have at least one eligible anchor relation, in pool order, with those relations. */
  candidates: { candidate: VerifierCandidate; relations: EligibleRelation[] }[];
  signal?: AbortSignal;
}

/**
 * One normalised ECV judgement for one candidate (method notes 5): the rules have already been applied, so
 * `anchorId` is eligible or null, and `kept` is true exactly for a positive role with incrementalSupport > 0.
 */
export interface EdgeJudgement {
  candidateId: string;
  anchorId: string | null;
  incrementalSupport: number;
  role: EdgeRole;
  kept: boolean;
}

export type EdgeVerifierResult =
  | { ok: true; judgements: EdgeJudgement[]; call?: VerifierCall }
  | { ok: false; error: string; call?: VerifierCall };

/** The edge verifier port (ECV, paper 3.4 eq. 7-9): anchor-conditioned judgement of schema edges. */
export interface EdgeVerifier {
  readonly specificationVersion: 'v1';
  readonly name: string;
  readonly kind: 'model' | 'offline';
  verify(input: EdgeVerifierInput): Promise<EdgeVerifierResult>;
}
