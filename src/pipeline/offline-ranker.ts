import { fitListwise, type ListwiseGroup } from '../core/fit-listwise.ts';
import { fitLogistic } from '../core/fit-logistic.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { type EdgeReliability, type EdgeReliabilityRow, fitEdgeReliability } from './edge-reliability.ts';
import shipped from './offline-ranker.json' with { type: 'json' };
import { sigmoid } from './prize-calibration.ts';
import { RANKER_FEATURES } from './ranker-features.ts';
import type { JudgedEdge, PoolCandidate } from './retrieval-result.ts';

/** Name the ranker goes by in traces and docs: what it is, a listwise logistic model over offline features. */
export const OFFLINE_RANKER_NAME = 'listwise-logistic-offline-ranker';
/**
 * Bump when the features, their normalisation or the fit change: another version is never applied. 6: the
 * listwise L2 chosen by leaving one dev context out (RANKER_L2).
 */
export const OFFLINE_RANKER_VERSION = 6;
/**
 * L2 penalty of the listwise fit. Chosen by leave-one-context-out on dev fold 0 (`npx tsx
 * bench/ranker-loco-probe.ts <the four dev archives> --l2 0.001,...,10`): each context scored by a ranker fitted
 * on fold 0 of the others, the mean over the four archive shapes of that recall on fold 0, argmax 3 (68.33)
 * against 0.01 before (66.83), beaten by more than the 0.5-point rule. A light penalty fits the order of the
 * training contexts' pools closely and transfers badly to a dataset it never saw (M3Exam with a ranker fitted
 * on Mem-Gallery alone: 67.6 at 0.01, 72.1 at 3 on folds 1-4); docs/offline-verifiers.md, "Seventh round".
 */
export const RANKER_L2 = 3;

/**
 * The two archive shapes the prize calibration distinguishes, read from the pool itself: `units` when some
 * pool members are joined by a unit relation (same_round / same_record: user/assistant rounds, mail threads),
 * `turns` otherwise (two-person chats without rounds, photo rolls, notes). Chosen per question, automatically.
 */
export type PoolShape = 'units' | 'turns';

/** p = sigmoid(a z + c) of a ranker score z. */
export interface ScoreCalibration {
  a: number;
  c: number;
}

/**
 * A fitted ranker: z_i = sum_j weights[j] x_ij orders the pool (listwise), and p_i = sigmoid(a z_i + c) with
 * the (a, c) of the pool's shape is the probability that pool member i is gold evidence, used as its prize.
 * `key` is the retriever + verifier configuration it was fitted for.
 */
export interface OfflineRanker {
  name: typeof OFFLINE_RANKER_NAME;
  version: number;
  key: string;
  features: string[];
  weights: number[];
  calibration: Record<PoolShape, ScoreCalibration>;
  /**
   * Reliability w of the offline ECV's cross-unit edges per shape (src/pipeline/edge-reliability.ts); absent
   * in an artifact fitted without edges, where the paper's w = 0.99 s_inc / 5 stays.
   */
  edgeReliability?: EdgeReliability;
  /**
   * The refinement's tree cost kappa for these prizes, fitted on the same dev questions by replaying the solver
   * (src/pipeline/refinement-kappa.ts); absent: the paper's 0.12. A caller's `solver.kappa` wins.
   */
  refinement?: { kappa: number };
  /** Provenance: the command, the data (dev fold only), sample counts and the fit's losses. */
  fittedOn?: Record<string, unknown>;
}

/** The shipped artifact when it was fitted for this configuration and the current feature version. */
export function resolveRanker(key: string): OfflineRanker | undefined {
  const artifact = shipped as unknown as Partial<OfflineRanker>;
  return isUsableRanker(artifact, key) ? (artifact as OfflineRanker) : undefined;
}

export function isUsableRanker(artifact: Partial<OfflineRanker>, key: string): boolean {
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const calibration = artifact.calibration as
    | Partial<Record<PoolShape, Partial<ScoreCalibration>>>
    | undefined;
  return (
    artifact.name === OFFLINE_RANKER_NAME &&
    artifact.version === OFFLINE_RANKER_VERSION &&
    artifact.key === key &&
    Array.isArray(artifact.features) &&
    artifact.features.length === RANKER_FEATURES.length &&
    artifact.features.every((name, i) => name === RANKER_FEATURES[i]) &&
    Array.isArray(artifact.weights) &&
    artifact.weights.length === RANKER_FEATURES.length &&
    artifact.weights.every(finite) &&
    (['units', 'turns'] as const).every(
      (shape) => finite(calibration?.[shape]?.a) && finite(calibration?.[shape]?.c),
    ) &&
    (artifact.edgeReliability === undefined ||
      (['units', 'turns'] as const).every(
        (shape) =>
          finite(artifact.edgeReliability?.[shape]?.a) &&
          finite(artifact.edgeReliability?.[shape]?.c) &&
          (artifact.edgeReliability?.[shape]?.reply === undefined ||
            finite(artifact.edgeReliability?.[shape]?.reply)),
      )) &&
    (artifact.refinement === undefined ||
      (finite(artifact.refinement.kappa) && artifact.refinement.kappa >= 0))
  );
}

/** Prizes of a pool from its feature rows and its shape. */
export function rankerPrizes(
  ranker: OfflineRanker,
  rows: readonly (readonly number[])[],
  shape: PoolShape,
): number[] {
  const { a, c } = ranker.calibration[shape];
  return rows.map((x) => sigmoid(a * dotProduct(ranker.weights, x) + c));
}

/** One dev question's pool for the fit: feature rows, gold flags and its shape. */
export interface RankerGroup extends ListwiseGroup {
  shape: PoolShape;
}

/**
 * Fits the ranker in two steps on the pools of dev-fold questions: (1) the feature weights by a listwise
 * logistic regression (one softmax per question, src/core/fit-listwise.ts), so the order inside a pool is
 * what is learned; (2) per pool shape, a pointwise logistic calibration p = sigmoid(a z + c) of the score z
 * over all pool members of that shape, so the prize is the probability of being gold, as the solver's
 * objective reads it (a memory is worth adding when p > kappa). Without rounds the same score means a higher
 * chance of gold (the other half of a gold exchange is not linked to it), which one shared calibration got
 * wrong by about a factor of two (docs/offline-verifiers.md). A shape without dev pools takes the other's.
 */
export function fitOfflineRanker(
  groups: readonly RankerGroup[],
  key: string,
  fittedOn: Record<string, unknown>,
  edgeRows: readonly EdgeReliabilityRow[] = [],
  fit: RankerFitOptions = {},
): OfflineRanker & { logLoss: Record<PoolShape, number> } {
  const l2 = fit.l2 ?? RANKER_L2;
  const rows = groups.flatMap((g) => g.rows.map((x, i) => ({ x, y: g.gold[i] === true, shape: g.shape })));
  if (rows.length === 0 || !rows.some((r) => r.y) || rows.every((r) => r.y)) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      'the ranker needs pool members of dev questions with and without gold evidence',
      { location: { field: 'questions' } },
    );
  }
  const order = fitListwise(groups, l2);
  const fitShape = (shape: PoolShape) => {
    const scores = rows
      .filter((r) => r.shape === shape)
      .map((r) => ({ x: [dotProduct(order.weights, r.x)], y: r.y }));
    if (!scores.some((s) => s.y) || scores.every((s) => s.y)) return undefined;
    const fit = fitLogistic(scores, 0);
    return { calibration: { a: fit.weights[0]!, c: fit.bias }, logLoss: fit.logLoss, samples: scores.length };
  };
  const units = fitShape('units');
  const turns = fitShape('turns');
  const fallback = units ?? turns ?? fitShapeless(rows, order.weights);
  const calibration = {
    units: (units ?? fallback).calibration,
    turns: (turns ?? fallback).calibration,
  };
  const logLoss = { units: (units ?? fallback).logLoss, turns: (turns ?? fallback).logLoss };
  const edges = fitEdgeReliability(edgeRows);
  return {
    name: OFFLINE_RANKER_NAME,
    version: OFFLINE_RANKER_VERSION,
    key,
    features: [...RANKER_FEATURES],
    weights: order.weights,
    calibration,
    ...(edges ? { edgeReliability: { units: edges.units, turns: edges.turns } } : {}),
    fittedOn: {
      ...fittedOn,
      l2,
      ...(edges ? { edgeSamples: edges.samples } : {}),
      samples: rows.length,
      positives: rows.filter((r) => r.y).length,
      pools: {
        units: groups.filter((g) => g.shape === 'units').length,
        turns: groups.filter((g) => g.shape === 'turns').length,
      },
      listwiseLoss: order.loss,
      logLoss,
    },
    logLoss,
  };
}

/** How the listwise weights are fitted (default: RANKER_L2). */
export interface RankerFitOptions {
  l2?: number;
}

function fitShapeless(rows: readonly { x: readonly number[]; y: boolean }[], weights: readonly number[]) {
  const fit = fitLogistic(
    rows.map((r) => ({ x: [dotProduct(weights, r.x)], y: r.y })),
    0,
  );
  return { calibration: { a: fit.weights[0]!, c: fit.bias }, logLoss: fit.logLoss, samples: rows.length };
}

function dotProduct(w: readonly number[], x: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < x.length; i++) z += w[i]! * x[i]!;
  return z;
}

/**
 * The ranker reads each memory alone (pool-relative features), so two copies of one mail get alike prizes and
 * both clear kappa. The edge verifier's `redundant` role says a candidate repeats its anchor: next to an anchor
 * worth at least as much it adds nothing, so its prize becomes 0 and it cannot stand as a tree of its own
 * (p <= kappa) nor displace a memory that adds something. Applied to ranker prizes only: sigmoid(a s + b v + c)
 * stays the paper's. Prizes are compared before any is dropped, so the outcome does not depend on edge order.
 */
export function withoutRepeatPrizes<T extends Pick<PoolCandidate, 'memoryId' | 'prize'>>(
  pool: readonly T[],
  edges: readonly Pick<JudgedEdge, 'a' | 'b' | 'role'>[],
): T[] {
  const prizeOf = new Map(pool.map((c) => [c.memoryId, c.prize]));
  const repeats = new Set<string>();
  for (const edge of edges) {
    if (edge.role !== 'redundant') continue;
    const anchor = prizeOf.get(edge.a);
    const candidate = prizeOf.get(edge.b);
    if (anchor !== undefined && candidate !== undefined && anchor >= candidate) repeats.add(edge.b);
  }
  return pool.map((c) => (repeats.has(c.memoryId) ? { ...c, prize: 0 } : c));
}
