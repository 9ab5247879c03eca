import type { CandidateEdge } from './candidate-graph.ts';

/** The two numbers an objective needs: the per-component opening cost kappa and the cost multiplier lambda. */
export interface GainParams {
  kappa: number;
  lambda: number;
}

/**
 * Objective values closer than this are treated as ties (method notes 7: "strict improvement > 1e-12").
 * Ties are then broken by the documented deterministic rules, never by input order.
 */
export const OBJECTIVE_TOLERANCE = 1e-12;

/** Floor applied to an edge weight before taking its log, so a zero weight gives a large finite cost. */
export const MIN_EDGE_WEIGHT = 1e-6;

/** Uncertainty cost of an edge: c = -ln(max(w, 1e-6)). */
export function edgeCostFromWeight(weight: number): number {
  return -Math.log(Math.max(weight, MIN_EDGE_WEIGHT));
}

/** ECV reliability of an edge from its incremental support s_inc in 0..5: w = 0.99 * s_inc / 5. */
export function ecvEdgeWeight(incrementalSupport: number): number {
  return (0.99 * incrementalSupport) / 5;
}

/** Structural gain B_e = kappa - lambda * c_e: what joining two memories through e saves over two trees. */
export function structuralGain(edge: Pick<CandidateEdge, 'cost'>, params: GainParams): number {
  return params.kappa - params.lambda * edge.cost;
}
