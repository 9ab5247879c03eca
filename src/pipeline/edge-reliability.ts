import { fitLogistic } from '../core/fit-logistic.ts';
import { edgeCostFromWeight } from '../core/index.ts';
import type { RelationType } from '../types/relation.ts';
import type { PoolShape, ScoreCalibration } from './offline-ranker.ts';
import { sigmoid } from './prize-calibration.ts';
import type { JudgedEdge } from './retrieval-result.ts';

/** Relations that make two memories one unit (one exchange, one thread): the ECV's flat same-unit rule. */
const SAME_UNIT: ReadonlySet<RelationType> = new Set(['same_round', 'same_record', 'record_grounding']);

/** The paper's ceiling on an edge's reliability (w = 0.99 s_inc / 5 at s_inc = 5). */
const MAX_EDGE_WEIGHT = 0.99;

/**
 * Reliability of the offline ECV's cross-unit edges (an adjacent turn, a nearby photo), per pool shape:
 * w = sigmoid(a s_inc + c), the probability that the candidate is gold evidence when its anchor is, fitted on
 * dev-fold edges. The paper maps a model ECV's 0-5 score linearly (w = 0.99 s_inc / 5); the offline ECV's
 * cross-unit score 5 rel^2 is a hand-set scale, so it is calibrated to the probability w stands for, as the
 * node prizes are. Same-unit edges keep the paper's mapping (flat s_inc 5: the two halves of one exchange).
 */
export type EdgeReliability = Record<PoolShape, ScoreCalibration>;

/** One dev-fold edge for the fit: a kept cross-unit edge whose anchor is gold. */
export interface EdgeReliabilityRow {
  shape: PoolShape;
  incrementalSupport: number;
  candidateGold: boolean;
}

export function isCrossUnitEdge(edge: Pick<JudgedEdge, 'relationTypes'>): boolean {
  return !edge.relationTypes.some((t) => SAME_UNIT.has(t));
}

/** The dev-fold rows of one question: its kept cross-unit edges whose anchor is gold. */
export function edgeReliabilityRows(
  edges: readonly JudgedEdge[],
  gold: ReadonlySet<string>,
  shape: PoolShape,
): EdgeReliabilityRow[] {
  return edges
    .filter((e) => e.kept && isCrossUnitEdge(e) && gold.has(e.a))
    .map((e) => ({ shape, incrementalSupport: e.incrementalSupport ?? 0, candidateGold: gold.has(e.b) }));
}

/**
 * Fits w = sigmoid(a s_inc + c) per shape (unpenalised logistic regression of "candidate is gold" on s_inc).
 * A shape whose rows do not hold both outcomes takes the other shape's fit; undefined when neither does.
 */
export function fitEdgeReliability(
  rows: readonly EdgeReliabilityRow[],
): (EdgeReliability & { samples: Record<PoolShape, number> }) | undefined {
  const fitShape = (shape: PoolShape): ScoreCalibration | undefined => {
    const list = rows.filter((r) => r.shape === shape);
    if (!list.some((r) => r.candidateGold) || list.every((r) => r.candidateGold)) return undefined;
    const fit = fitLogistic(
      list.map((r) => ({ x: [r.incrementalSupport], y: r.candidateGold })),
      0,
    );
    return { a: fit.weights[0]!, c: fit.bias };
  };
  const units = fitShape('units');
  const turns = fitShape('turns');
  const fallback = units ?? turns;
  if (fallback === undefined) return undefined;
  return {
    units: units ?? fallback,
    turns: turns ?? fallback,
    samples: {
      units: rows.filter((r) => r.shape === 'units').length,
      turns: rows.filter((r) => r.shape === 'turns').length,
    },
  };
}

/** Kept cross-unit edges get the calibrated reliability of the pool's shape (and its cost); others unchanged. */
export function withCalibratedEdges(
  edges: readonly JudgedEdge[],
  calibration: ScoreCalibration,
): JudgedEdge[] {
  return edges.map((edge) => {
    if (!edge.kept || !isCrossUnitEdge(edge)) return edge;
    const weight = Math.min(
      MAX_EDGE_WEIGHT,
      sigmoid(calibration.a * (edge.incrementalSupport ?? 0) + calibration.c),
    );
    return { ...edge, weight, cost: edgeCostFromWeight(weight) };
  });
}
