import { describe, expect, it } from 'vitest';
import type { CandidateEdge } from '../../src/core/candidate-graph.ts';
import { ecvPointwise } from '../../src/eval/selectors/ecv-pointwise.ts';
import type { FrozenCandidate, FrozenPool } from '../../src/eval/selectors/frozen-pool.ts';
import { parseSelectorList, poolSelector } from '../../src/eval/selectors/selector-registry.ts';
import { dpp, facilityLocation, mmr, nodeTopK } from '../../src/eval/selectors/similarity-selectors.ts';

function candidate(id: string, position: number, prize: number): FrozenCandidate {
  return { id, position, prize, retrievalScore: prize, verifierScore: 0 };
}

/** a and a2 are near-duplicates; b is different; c is weak. */
function pool(edges: CandidateEdge[] = []): FrozenPool {
  const groups: Record<string, string> = { a: 'g1', a2: 'g1', b: 'g2', c: 'g3' };
  return {
    candidates: [
      candidate('a', 0, 0.9),
      candidate('a2', 1, 0.89),
      candidate('b', 2, 0.7),
      candidate('c', 3, 0.3),
    ],
    edges,
    similarity: (x, y) => (x === y ? 1 : groups[x] === groups[y] ? 0.98 : 0.05),
  };
}

function edge(a: string, b: string, weight: number): CandidateEdge {
  return { a, b, weight, cost: -Math.log(weight), relationTypes: ['same_record'], role: 'new_fact' };
}

describe('baseline selectors', () => {
  it('node top-K orders by prize, ties by pool position then id', () => {
    const tied: FrozenPool = {
      candidates: [
        candidate('z', 2, 0.5),
        candidate('y', 1, 0.5),
        candidate('x', 1, 0.5),
        candidate('w', 0, 0.4),
      ],
      edges: [],
      similarity: () => 0,
    };
    expect(nodeTopK(tied, 3)).toEqual(['x', 'y', 'z']);
    expect(nodeTopK(pool(), 10)).toEqual(['a', 'a2', 'b', 'c']);
    expect(nodeTopK(pool(), 0)).toEqual([]);
  });

  it('MMR keeps the prize order when beta is tiny and skips a near-duplicate when beta is large', () => {
    expect(mmr(0.05)(pool(), 2)).toEqual(['a', 'a2']);
    expect(mmr(0.5)(pool(), 2)).toEqual(['a', 'b']);
  });

  it('facility location prefers covering an uncovered group', () => {
    expect(facilityLocation(0.25)(pool(), 2)).toEqual(['a', 'b']);
    expect(facilityLocation(0)(pool(), 2)).toEqual(['a', 'a2']);
  });

  it('DPP avoids near-duplicates and still returns K items', () => {
    const picked = dpp(8, 0.5)(pool(), 3);
    expect(picked).toHaveLength(3);
    expect(picked.slice(0, 2)).toEqual(['a', 'b']);
    expect(dpp()(pool(), 10)).toHaveLength(4);
  });

  it('ECV pointwise adds the strongest kept edge as a bonus', () => {
    const base = pool();
    base.candidates[3] = candidate('c', 3, 0.6);
    const withEdge = { ...base, edges: [edge('a', 'c', 0.99), edge('a', 'b', 0.4), edge('b', 'c', 0.2)] };
    // c: 0.6 + 0.4 * 0.99 (its strongest edge); b: 0.7 + 0.16; the anchor a gets no bonus.
    expect(ecvPointwise(0.4)(withEdge, 3)).toEqual(['c', 'a', 'a2']);
    expect(ecvPointwise(0.4)(withEdge, 4)).toEqual(['c', 'a', 'a2', 'b']);
    expect(ecvPointwise(0.4)(pool(), 3)).toEqual(['a', 'a2', 'b']);
  });
});

describe('forest selectors on a frozen pool', () => {
  // Anchor a with two verified complementary memories below the node cutoff; near-duplicate a2.
  const forestPool: FrozenPool = {
    candidates: [
      candidate('a', 0, 0.8),
      candidate('a2', 1, 0.5),
      candidate('x', 2, 0.45),
      candidate('c1', 3, 0.4),
      candidate('c2', 4, 0.38),
    ],
    edges: [edge('a', 'c1', 0.99), edge('a', 'c2', 0.99)],
    similarity: () => 0,
  };

  it('graphmemix refines at the kappa the pipeline solved the pool with', () => {
    // c (p 0.3) is isolated: the paper's 0.12 keeps it, a pool solved at kappa 0.35 drops it.
    const chosen = poolSelector('graphmemix');
    expect(chosen(pool(), 4)).toContain('c');
    expect(chosen({ ...pool(), refinementKappa: 0.35 }, 4)).not.toContain('c');
    expect(chosen({ ...pool(), refinementKappa: 0.35 }, 4)).toContain('b');
  });

  it('graphmemix recovers verified low-prize evidence that node top-K misses', () => {
    expect(nodeTopK(forestPool, 3)).toEqual(['a', 'a2', 'x']);
    const chosen = poolSelector('graphmemix')(forestPool, 3);
    expect(chosen).toContain('c1');
    expect(chosen).toContain('c2');
    expect(chosen[0]).toBe('a');
  });

  it('fixed-K selectors return exactly K; the forest proposal never has an improving swap vs greedy', () => {
    for (const name of ['greedy-forest', 'forest-proposal'] as const) {
      expect(poolSelector(name)(forestPool, 3)).toHaveLength(3);
    }
    expect(new Set(poolSelector('forest-proposal')(forestPool, 3))).toEqual(new Set(['a', 'c1', 'c2']));
  });

  it('rejects unknown selector names with a stable code', () => {
    expect(() => parseSelectorList('node-topk,bogus')).toThrowError(
      expect.objectContaining({ code: 'UNSUPPORTED' }),
    );
    expect(parseSelectorList(undefined)).toHaveLength(9);
  });
});
