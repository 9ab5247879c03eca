import { GraphmemixError } from '../errors/index.ts';
import type { CandidateGraph, SolverParams } from './candidate-graph.ts';
import { solveForest } from './solve-forest.ts';

/** One dev question for the kappa fit: its prized graph, its gold memories and how many gold it has in all. */
export interface KappaFitQuestion {
  graph: CandidateGraph;
  gold: ReadonlySet<string>;
  /** Gold memories of the question, also those outside the pool (the Recall@K denominator). */
  goldCount: number;
}

export interface KappaFitOptions {
  /** Values tried; `reference` is tried too. */
  grid: readonly number[];
  /** The value kept unless another one beats it by at least `minGain`. */
  reference: number;
  /** Least gain in mean recall (a share: 0.005 = 0.5 points) that replaces the reference. */
  minGain: number;
  /** Solver params other than the refinement kappa (K, lambda, kappaProposal). */
  solver: Omit<SolverParams, 'kappa'>;
}

export interface KappaFit {
  kappa: number;
  /** Mean Recall@K over the sets (each set weighs the same) of every value tried, ascending kappa. */
  recall: { kappa: number; recall: number }[];
  questions: number;
}

/**
 * Fits the refinement's tree cost kappa for prizes on a given scale: for every value, the full solver (proposal
 * + exact refinement, unchanged) runs on each dev question, and the value with the best mean Recall@K wins,
 * the mean taken per set first (one set per archive shape, so a large set does not outvote a small one).
 * Ties (within 1e-9) go to the larger kappa, the smaller packet. The reference (the paper's kappa) stays
 * unless the best value beats it by `minGain`: the same rule every tuned constant obeys. Pure.
 */
export function fitRefinementKappa(
  sets: readonly (readonly KappaFitQuestion[])[],
  options: KappaFitOptions,
): KappaFit {
  const used = sets.filter((set) => set.length > 0);
  const values = [...new Set([...options.grid, options.reference])].sort((a, b) => a - b);
  if (used.length === 0 || values.some((v) => !Number.isFinite(v) || v < 0)) {
    throw new GraphmemixError('INVALID_INPUT', 'the kappa fit needs dev questions and finite values >= 0', {
      location: { field: 'kappa' },
    });
  }
  const recall = values.map((kappa) => ({
    kappa,
    recall: mean(used.map((set) => mean(set.map((q) => questionRecall(q, { ...options.solver, kappa }))))),
  }));
  let best = recall[0]!;
  for (const entry of recall) if (entry.recall >= best.recall - 1e-9) best = entry;
  const reference = recall.find((entry) => entry.kappa === options.reference)!;
  const kappa = best.recall - reference.recall >= options.minGain - 1e-12 ? best.kappa : reference.kappa;
  return { kappa, recall, questions: used.reduce((n, set) => n + set.length, 0) };
}

/** Recall@K of the solver's packet for one question (0 for a question without gold). */
export function questionRecall(question: KappaFitQuestion, params: SolverParams): number {
  if (question.goldCount <= 0) return 0;
  let found = 0;
  for (const id of solveForest(question.graph, params).order) if (question.gold.has(id)) found++;
  return found / question.goldCount;
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, v) => sum + v, 0) / values.length;
}
