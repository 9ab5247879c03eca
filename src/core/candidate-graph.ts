import type { RelationType } from '../types/relation.ts';

/**
 * The data the forest solver works on: candidates with prizes and verified (trusted) edges.
 * Everything is plain data so the solver stays pure and replayable.
 */
export interface CandidateNode {
  /** Memory id. */
  id: string;
  /** Position in the candidate pool (retrieval order, then expansion order); the tie-breaker. */
  position: number;
  /** Node prize p_i in (0, 1). */
  prize: number;
}

/** ECV roles. Only the first three are positive and can become forest edges. */
export type EdgeRole =
  | 'new_fact'
  | 'clarification'
  | 'corroboration'
  | 'redundant'
  | 'conflict'
  | 'irrelevant';
export const POSITIVE_ROLES: readonly EdgeRole[] = ['new_fact', 'clarification', 'corroboration'];

export interface CandidateEdge {
  /** Anchor memory id. */
  a: string;
  /** Candidate memory id. */
  b: string;
  /** Reliability w in (0, 0.99]; c = -ln(max(w, 1e-6)). */
  weight: number;
  /** Uncertainty cost c_e = -ln(max(w, 1e-6)). */
  cost: number;
  relationTypes: RelationType[];
  role: EdgeRole;
  /** ECV incremental support s_inc in 0..5 (kept for inspection). */
  incrementalSupport?: number;
}

export interface CandidateGraph {
  nodes: CandidateNode[];
  edges: CandidateEdge[];
}

export interface SolverParams {
  /** Reader budget K (max memories). Default 10. */
  k: number;
  /** Cost multiplier lambda. Default 0.1. */
  lambda: number;
  /** Component cost used by the fixed-K proposal. Default 0.2. */
  kappaProposal: number;
  /** Component cost used by the exact refinement. Default 0.12. */
  kappa: number;
}

export const DEFAULT_SOLVER_PARAMS: SolverParams = { k: 10, lambda: 0.1, kappaProposal: 0.2, kappa: 0.12 };

/** One tree of the final forest, serialized breadth-first. */
export interface ForestTree {
  rootId: string;
  /** Node ids in breadth-first reading order (root first). */
  order: string[];
  /** Parent of each non-root node with the edge that joins them. */
  parents: Record<string, { parentId: string; edge: CandidateEdge }>;
}

export interface SwapStep {
  /** Node taken out of the selection. */
  out: string;
  /** Node brought in. */
  in: string;
  /** Objective (at kappaProposal) after the swap. */
  objective: number;
}

export interface SolverTrace {
  initial: string[];
  initialObjective: number;
  swaps: SwapStep[];
  proposal: string[];
  proposalObjective: number;
  proposalEdges: CandidateEdge[];
  /** Proposal nodes removed by the exact refinement. */
  dropped: string[];
  finalObjective: number;
  /** How the refinement searched: 'enumerate' (2^K subsets) or 'components' (exact DP/pruned search). */
  refineMethod: string;
  /** The params it solved with (K, lambda, both kappas): with the graph, all a replay needs. */
  params?: SolverParams;
}

export interface ForestSolution {
  /** Selected memory ids in reading order (trees by root prize, each breadth-first). */
  order: string[];
  trees: ForestTree[];
  /** Chosen forest edges. */
  edges: CandidateEdge[];
  objective: number;
  trace: SolverTrace;
}
