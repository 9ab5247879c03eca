import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { EvalQuestion } from '../types/question.ts';
import { toQuestionInput } from './calibrate-prizes.ts';
import { type EdgeReliabilityRow, edgeReliabilityRows } from './edge-reliability.ts';
import { poolFeatureRows, verifiedEdgesOf } from './evidence-stages.ts';
import {
  fitOfflineRanker,
  type OfflineRanker,
  type PoolShape,
  type RankerFitOptions,
  type RankerGroup,
} from './offline-ranker.ts';
import { calibrationKey, calibrationParts } from './prize-calibration.ts';
import { poolShape } from './ranker-features.ts';
import { fitRankerRefinement, type RankerQuestion } from './ranker-refinement.ts';
import { verifiedPool } from './retrieve-evidence.ts';
import { selectVerifiers } from './select-verifiers.ts';
import { TraceBuilder } from './trace-builder.ts';

export interface TrainRankerOptions {
  /** Which questions to fit on: REQUIRED, so nobody trains on evaluation questions (the CLI: dev fold). */
  include: (question: EvalQuestion) => boolean;
  /** Recorded in the artifact: the command and data it was fitted with. */
  provenance: Record<string, unknown>;
  /** How the listwise weights are fitted (default: RANKER_L2 towards zero). */
  fit?: RankerFitOptions;
  onProgress?: (done: number, total: number) => void;
}

/** A question the fit learns from: its pool (RankerQuestion) with where it comes from and its edge rows. */
export interface RankerTrainingQuestion extends RankerQuestion {
  contextId: string;
  questionId: string;
  /** The pool's ECV edges as rows of the edge reliability fit. */
  edgeRows: readonly EdgeReliabilityRow[];
}

/**
 * Fits the `listwise-logistic-offline-ranker` (offline verifiers, no model): every included question with stored gold
 * runs the pipeline's stages 1-3 (the same code as retrieve), each pool member gives one row (its
 * pool-relative features, is gold), and `fitOfflineRanker` fits the listwise weights over all pools of all
 * stores, then one calibration per pool shape. Several stores let one artifact learn from several archive shapes (e.g. the same dev data with and
 * without rounds), so its prizes mean the same on both.
 */
export async function trainOfflineRanker(
  stores: readonly ArchiveStore[],
  options: TrainRankerOptions,
): Promise<OfflineRanker & { logLoss: Record<PoolShape, number>; questions: number }> {
  const sets = await rankerTrainingQuestions(stores, options);
  return fitRankerOnQuestions(sets, offlineRankerKey(), options.provenance, options.fit);
}

/** The calibration key of the offline configuration (default retriever, offline verifiers). */
export function offlineRankerKey(): string {
  return calibrationKey(calibrationParts(undefined, selectVerifiers('offline', {})));
}

/**
 * Stages 1-3 of every included question with stored gold, one set per store (the kappa fit weighs each
 * archive alike). Questions whose node verifier failed are left out, as retrieve would not use the ranker.
 */
export async function rankerTrainingQuestions(
  stores: readonly ArchiveStore[],
  options: Pick<TrainRankerOptions, 'include' | 'onProgress'>,
): Promise<RankerTrainingQuestion[][]> {
  const sets: RankerTrainingQuestion[][] = [];
  for (const store of stores) {
    const set: RankerTrainingQuestion[] = [];
    sets.push(set);
    const contexts = (await store.listContexts()).map((c) => c.id);
    const list = (await Promise.all(contexts.map((c) => store.listQuestions(c))))
      .flat()
      .filter(options.include);
    for (const [index, question] of list.entries()) {
      options.onProgress?.(index, list.length);
      const gold = new Set((await store.getMemories(question.contextId, question.evidence)).map((r) => r.id));
      if (gold.size === 0) continue;
      const pool = await verifiedPool(
        { store, models: {} },
        question.contextId,
        toQuestionInput(question),
        { verifiers: 'offline' },
        undefined,
        new TraceBuilder(),
      );
      if (!pool.nodeResult?.ok) continue;
      const features = poolFeatureRows(
        pool.retrieved,
        pool.expanded,
        pool.question,
        pool.nodeResult,
        pool.relations,
      );
      const edges = verifiedEdgesOf(pool.edgeResult, pool.expanded.eligible);
      const shape = poolShape(pool.relations);
      set.push({
        contextId: question.contextId,
        questionId: question.id,
        ids: pool.expanded.candidates.map((c) => c.memoryId),
        rows: features,
        shape,
        edges,
        edgeRows: edgeReliabilityRows(edges, gold, shape, pool.expanded.records),
        records: pool.expanded.records,
        gold,
        goldCount: gold.size,
      });
    }
  }
  return sets;
}

/**
 * The ranker fitted on collected questions (one set per archive): listwise weights, per-shape calibrations
 * and edge reliability over all of them, then the refinement kappa replayed per set.
 */
export function fitRankerOnQuestions(
  sets: readonly (readonly RankerTrainingQuestion[])[],
  key: string,
  provenance: Record<string, unknown>,
  fit: RankerFitOptions = {},
): OfflineRanker & { logLoss: Record<PoolShape, number>; questions: number } {
  const all = sets.flat();
  const groups: RankerGroup[] = all.map((q) => ({
    rows: q.rows,
    gold: q.ids.map((id) => q.gold.has(id)),
    shape: q.shape,
  }));
  const questions = all.length;
  const ranker = fitOfflineRanker(
    groups,
    key,
    { ...provenance, questions },
    all.flatMap((q) => q.edgeRows),
    fit,
  );
  // The refinement kappa for these prizes, on the same dev questions (src/pipeline/ranker-refinement.ts).
  const kappaFit = fitRankerRefinement(ranker, sets);
  return {
    ...ranker,
    refinement: { kappa: kappaFit.kappa },
    fittedOn: {
      ...ranker.fittedOn,
      refinementKappa: {
        rule: 'argmax of dev-fold Recall@10 (mean over archives), paper 0.12 kept unless beaten by 0.5 points',
        recall: kappaFit.recall.map((r) => ({ kappa: r.kappa, recall: Math.round(r.recall * 1e6) / 1e6 })),
      },
    },
    questions,
  };
}
