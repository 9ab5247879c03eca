import type { SchemaRelationType } from '../types/relation.ts';
import type { VerifierCall, VerifierCandidate, VerifierQuestion } from './verifier-input.ts';

export interface NodeVerifierInput {
  question: VerifierQuestion;
  /** All M pool candidates in pool order. */
  candidates: VerifierCandidate[];
  /**
   * Schema relations among the pool candidates (both endpoints in the pool). A model verifier judges each
   * snippet on its own and ignores them; the offline verifier uses them to read a memory in its context.
   */
  relations?: PoolRelation[];
  signal?: AbortSignal;
}

/** A schema relation between two pool candidates. */
export interface PoolRelation {
  a: string;
  b: string;
  types: SchemaRelationType[];
}

/**
 * Scores keyed by memory id, each 0..5 ("how well does this memory support the answer on its own");
 * candidates left out score 0. `ok: false` means every attempt failed: the caller falls back to
 * retrieval-only prizes (v = 0) and flags it. Verifiers never throw for a model fault.
 */
export type NodeVerifierResult =
  | { ok: true; scores: Map<string, number>; call?: VerifierCall }
  | { ok: false; error: string; call?: VerifierCall };

/** The node verifier port (paper 3.4, eq. 6): one listwise judgement over the whole candidate pool. */
export interface NodeVerifier {
  readonly specificationVersion: 'v1';
  /** Implementation name for traces and the calibration key ('lexical-support', 'model:<id>'). */
  readonly name: string;
  /** 'model' calls a chat model; 'offline' needs nothing. */
  readonly kind: 'model' | 'offline';
  verify(input: NodeVerifierInput): Promise<NodeVerifierResult>;
}
