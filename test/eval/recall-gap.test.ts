import { describe, expect, it } from 'vitest';
import { questionRecallGap, summarizeRecallGap } from '../../src/eval/recall-gap.ts';
import type { RetrievalResult } from '../../src/pipeline/retrieval-result.ts';

/** Only the fields the gap reads: pool ids, the proposal and the packet. */
function result(pool: string[], proposal: string[], packet: string[]) {
  return {
    pool: pool.map((memoryId) => ({ memoryId })),
    forest: { trace: { proposal } },
    evidence: packet.map((memoryId) => ({ memoryId })),
  } as unknown as Pick<RetrievalResult, 'pool' | 'forest' | 'evidence'>;
}

describe('recall gap', () => {
  it('splits the lost gold into outside the pool, not proposed and dropped by the refinement', () => {
    // Gold g1..g4: g4 never entered the pool, g3 stayed in the pool, g2 was proposed then dropped, g1 kept.
    const gap = questionRecallGap(result(['g1', 'g2', 'g3', 'x1', 'x2'], ['g1', 'g2', 'x1'], ['g1', 'x1']), [
      'g1',
      'g2',
      'g3',
      'g4',
    ])!;
    expect(gap).toEqual({
      outsidePool: 0.25,
      inPoolNotProposed: 0.25,
      droppedByRefinement: 0.25,
      packetRecall: 0.25,
      packetSize: 2,
    });
    expect(questionRecallGap(result(['a'], ['a'], ['a']), [])).toBeUndefined();
  });

  it('averages in points and counts packets below K', () => {
    const full = questionRecallGap(result(['g'], ['g'], ['g']), ['g'])!;
    const lost = questionRecallGap(result(['g', 'x'], ['g', 'x'], ['x']), ['g'])!;
    const summary = summarizeRecallGap([full, lost], 2);
    expect(summary).toEqual({
      questions: 2,
      outside_pool: 0,
      in_pool_not_proposed: 0,
      dropped_by_refinement: 50,
      packet_recall: 50,
      mean_packet_size: 1,
      below_k: 1,
    });
    expect(summarizeRecallGap([], 10).questions).toBe(0);
  });
});
