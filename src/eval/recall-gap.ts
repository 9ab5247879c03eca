import type { RetrievalResult } from '../pipeline/retrieval-result.ts';

/**
 * Where one question's gold evidence is lost, as shares of its gold (they add up to 1 with the packet's
 * recall): never entered the M-pool, in the pool but not in the solver's fixed-K proposal, in the proposal
 * but dropped by the variable-size refinement.
 */
export interface QuestionRecallGap {
  outsidePool: number;
  inPoolNotProposed: number;
  droppedByRefinement: number;
  packetRecall: number;
  packetSize: number;
}

export function questionRecallGap(
  result: Pick<RetrievalResult, 'pool' | 'forest' | 'evidence'>,
  gold: readonly string[],
): QuestionRecallGap | undefined {
  const goldSet = new Set(gold);
  if (goldSet.size === 0) return undefined;
  const share = (ids: Iterable<string>) => {
    let found = 0;
    for (const id of new Set(ids)) if (goldSet.has(id)) found += 1;
    return found / goldSet.size;
  };
  const pool = share(result.pool.map((c) => c.memoryId));
  const proposal = share(result.forest.trace.proposal);
  const packet = share(result.evidence.map((item) => item.memoryId));
  return {
    outsidePool: 1 - pool,
    inPoolNotProposed: pool - proposal,
    droppedByRefinement: proposal - packet,
    packetRecall: packet,
    packetSize: result.evidence.length,
  };
}

/** Mean gap over questions (percentage points of recall) and the share of packets below K. */
export interface RecallGapSummary {
  questions: number;
  outside_pool: number;
  in_pool_not_proposed: number;
  dropped_by_refinement: number;
  packet_recall: number;
  mean_packet_size: number;
  /** Share of questions (0..1) whose packet held fewer than K memories. */
  below_k: number;
}

export function summarizeRecallGap(gaps: readonly QuestionRecallGap[], k: number): RecallGapSummary {
  const n = gaps.length;
  const mean = (pick: (g: QuestionRecallGap) => number) =>
    n === 0 ? 0 : gaps.reduce((s, g) => s + pick(g), 0) / n;
  return {
    questions: n,
    outside_pool: 100 * mean((g) => g.outsidePool),
    in_pool_not_proposed: 100 * mean((g) => g.inPoolNotProposed),
    dropped_by_refinement: 100 * mean((g) => g.droppedByRefinement),
    packet_recall: 100 * mean((g) => g.packetRecall),
    mean_packet_size: mean((g) => g.packetSize),
    below_k: mean((g) => (g.packetSize < k ? 1 : 0)),
  };
}
