import { type CandidateGraph, DEFAULT_SOLVER_PARAMS } from '../core/candidate-graph.ts';
import { fitRefinementKappa, type KappaFit, questionRecall } from '../core/fit-refinement-kappa.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { withCalibratedEdges } from './edge-reliability.ts';
import { evidenceGraph } from './evidence-stages.ts';
import { type OfflineRanker, type PoolShape, rankerPrizes, withoutRepeatPrizes } from './offline-ranker.ts';
import type { JudgedEdge, PoolCandidate } from './retrieval-result.ts';

/**
 * Kappa values the fit tries (with the paper's 0.12). Written before the fit was run: a hundredth steps near
 * zero, where a prize means "almost never evidence", then every 0.02 up to the paper's value.
 */
export const REFINEMENT_KAPPA_GRID: readonly number[] = [0, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12];
/** Least gain of mean Recall@K on the dev fold that replaces the paper's kappa (0.5 points: the constants rule). */
export const MIN_KAPPA_GAIN = 0.005;

/**
 * What the ranker makes of a prized pool before the solver: the offline ECV's cross-unit edges get the fitted
 * reliability of the pool's shape, and repeats lose their prize. The one path of retrieve and of the fit.
 */
export function rankerPoolAndEdges<T extends Pick<PoolCandidate, 'memoryId' | 'prize'>>(
  ranker: OfflineRanker,
  prized: readonly T[],
  judged: readonly JudgedEdge[],
  shape: PoolShape,
  records: ReadonlyMap<string, MemoryRecord>,
): { pool: T[]; edges: JudgedEdge[] } {
  const edges = ranker.edgeReliability
    ? withCalibratedEdges(judged, ranker.edgeReliability[shape], records)
    : [...judged];
  return { pool: withoutRepeatPrizes(prized, edges), edges };
}

/** One dev question as the fit keeps it: the pool's feature rows and ECV edges, and its gold. */
export interface RankerQuestion {
  ids: readonly string[];
  rows: readonly (readonly number[])[];
  shape: PoolShape;
  edges: readonly JudgedEdge[];
  records: ReadonlyMap<string, MemoryRecord>;
  gold: ReadonlySet<string>;
  /** Gold memories of the question, also those outside the pool. */
  goldCount: number;
}

/**
 * Fits the refinement kappa for a fitted ranker's prizes on its dev questions (one set per archive): the
 * prizes and edges exactly as retrieve makes them, then `fitRefinementKappa` (K = 10, the paper's lambda and
 * kappaProposal, the grid above, the paper's 0.12 kept unless beaten by 0.5 points of mean Recall@10).
 */
export function fitRankerRefinement(
  ranker: OfflineRanker,
  sets: readonly (readonly RankerQuestion[])[],
): KappaFit {
  const { kappa: reference, ...solver } = DEFAULT_SOLVER_PARAMS;
  return fitRefinementKappa(
    sets.map((set) =>
      set.map((q) => ({ graph: rankedGraph(ranker, q), gold: q.gold, goldCount: q.goldCount })),
    ),
    { grid: REFINEMENT_KAPPA_GRID, reference, minGain: MIN_KAPPA_GAIN, solver },
  );
}

function rankedGraph(ranker: OfflineRanker, q: RankerQuestion): CandidateGraph {
  const prizes = rankerPrizes(ranker, q.rows, q.shape);
  const prized = q.ids.map((memoryId, position) => ({ memoryId, position, prize: prizes[position]! }));
  const { pool, edges } = rankerPoolAndEdges(ranker, prized, q.edges, q.shape, q.records);
  return evidenceGraph(pool, edges);
}

/**
 * Mean Recall@K of the ranker's packets over questions (the solver with the ranker's refinement kappa, as
 * retrieve runs it): what a held-out evaluation of a fitted ranker replays without running retrieve again.
 */
export function rankerRecall(ranker: OfflineRanker, questions: readonly RankerQuestion[]): number {
  if (questions.length === 0) return 0;
  const { kappa: paper, ...solver } = DEFAULT_SOLVER_PARAMS;
  const params = { ...solver, kappa: ranker.refinement?.kappa ?? paper };
  let sum = 0;
  for (const q of questions)
    sum += questionRecall({ graph: rankedGraph(ranker, q), gold: q.gold, goldCount: q.goldCount }, params);
  return sum / questions.length;
}
