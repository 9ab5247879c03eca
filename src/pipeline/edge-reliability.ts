import { fitLogistic } from '../core/fit-logistic.ts';
import { edgeCostFromWeight } from '../core/index.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { RelationType } from '../types/relation.ts';
import { isReplyTurn } from '../verify/reply-turn.ts';
import type { PoolShape, ScoreCalibration } from './offline-ranker.ts';
import { sigmoid } from './prize-calibration.ts';
import type { JudgedEdge } from './retrieval-result.ts';

/** Relations that make two memories one unit (one exchange, one thread): the ECV's flat same-unit rule. */
const SAME_UNIT: ReadonlySet<RelationType> = new Set(['same_round', 'same_record', 'record_grounding']);

/** The paper's ceiling on an edge's reliability (w = 0.99 s_inc / 5 at s_inc = 5). */
const MAX_EDGE_WEIGHT = 0.99;

/**
 * Reliability of the offline ECV's cross-unit edges (an adjacent turn, a nearby photo), per pool shape:
 * w = sigmoid(a s_inc + reply r + c), the probability that the candidate is gold evidence when its anchor is,
 * fitted on dev-fold edges; r = 1 when the candidate is the anchor's reply (the next message, by the other
 * participant: src/verify/reply-turn.ts). The paper maps a model ECV's 0-5 score linearly (w = 0.99 s_inc / 5);
 * the offline ECV's cross-unit score 5 rel^2 is a hand-set scale, so it is calibrated to the probability w
 * stands for, as the node prizes are. Direction matters without rounds: on fold-0 turns-shape pools the reply
 * to a gold message was gold far more often than the message before it at the same s_inc (0.87 against 0.47 on
 * Mem-Gallery at s_inc < 1), which one curve in s_inc averaged away. Same-unit edges keep the paper's mapping
 * (flat s_inc 5: the two halves of one exchange). `reply` absent (older artifacts) reads as 0.
 */
export type EdgeReliability = Record<PoolShape, EdgeCalibration>;

export interface EdgeCalibration extends ScoreCalibration {
  reply?: number;
}

/** One dev-fold edge for the fit: a kept cross-unit edge whose anchor is gold. */
export interface EdgeReliabilityRow {
  shape: PoolShape;
  incrementalSupport: number;
  /** The candidate is the anchor's reply (next message, other participant). */
  reply: boolean;
  candidateGold: boolean;
}

/** L2 of the two-feature fit: keeps the reply weight finite when every reply of a shape is gold (or none is). */
const RELIABILITY_L2 = 1e-4;

export function isCrossUnitEdge(edge: Pick<JudgedEdge, 'relationTypes'>): boolean {
  return !edge.relationTypes.some((t) => SAME_UNIT.has(t));
}

/** Is the edge's candidate (b) the reply to its anchor (a)? False when either record is unknown. */
export function isReplyEdge(
  edge: Pick<JudgedEdge, 'a' | 'b' | 'relationTypes'>,
  records: ReadonlyMap<string, MemoryRecord>,
): boolean {
  const anchor = records.get(edge.a);
  const candidate = records.get(edge.b);
  return (
    anchor !== undefined && candidate !== undefined && isReplyTurn(anchor, candidate, edge.relationTypes)
  );
}

/** The dev-fold rows of one question: its kept cross-unit edges whose anchor is gold. */
export function edgeReliabilityRows(
  edges: readonly JudgedEdge[],
  gold: ReadonlySet<string>,
  shape: PoolShape,
  records: ReadonlyMap<string, MemoryRecord>,
): EdgeReliabilityRow[] {
  return edges
    .filter((e) => e.kept && isCrossUnitEdge(e) && gold.has(e.a))
    .map((e) => ({
      shape,
      incrementalSupport: e.incrementalSupport ?? 0,
      reply: isReplyEdge(e, records),
      candidateGold: gold.has(e.b),
    }));
}

/**
 * Fits w = sigmoid(a s_inc + c) per shape (unpenalised logistic regression of "candidate is gold" on s_inc).
 * A shape whose rows do not hold both outcomes takes the other shape's fit; undefined when neither does.
 */
export function fitEdgeReliability(
  rows: readonly EdgeReliabilityRow[],
): (EdgeReliability & { samples: Record<PoolShape, number> }) | undefined {
  const fitShape = (shape: PoolShape): EdgeCalibration | undefined => {
    const list = rows.filter((r) => r.shape === shape);
    if (!list.some((r) => r.candidateGold) || list.every((r) => r.candidateGold)) return undefined;
    const fit = fitLogistic(
      list.map((r) => ({ x: [r.incrementalSupport, r.reply ? 1 : 0], y: r.candidateGold })),
      RELIABILITY_L2,
    );
    return { a: fit.weights[0]!, reply: fit.weights[1]!, c: fit.bias };
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
  calibration: EdgeCalibration,
  records: ReadonlyMap<string, MemoryRecord>,
): JudgedEdge[] {
  return edges.map((edge) => {
    if (!edge.kept || !isCrossUnitEdge(edge)) return edge;
    const reply = isReplyEdge(edge, records) ? (calibration.reply ?? 0) : 0;
    const weight = Math.min(
      MAX_EDGE_WEIGHT,
      sigmoid(calibration.a * (edge.incrementalSupport ?? 0) + reply + calibration.c),
    );
    return { ...edge, weight, cost: edgeCostFromWeight(weight) };
  });
}
