import { describe, expect, it } from 'vitest';
import { expandCandidates, poolScores } from '../../src/retrieval/expand-candidates.ts';
import type { MemoryEdge } from '../../src/types/relation.ts';

const edge = (
  a: string,
  b: string,
  strength: number,
  types: MemoryEdge['types'] = ['same_round'],
): MemoryEdge => ({
  contextId: 'c',
  a: a < b ? a : b,
  b: a < b ? b : a,
  types,
  strength,
});

describe('expandCandidates (method notes 3)', () => {
  const seeds = [
    { memoryId: 's1', score: 0.9 },
    { memoryId: 's2', score: 0.8 },
  ];

  it('puts seeds first, then proposals by strength desc, parent rank asc, id asc', () => {
    const edges = [
      edge('s2', 'n-z', 0.99),
      edge('s1', 'n-b', 0.7, ['semantic_knn']),
      edge('s1', 'n-y', 0.99),
      edge('s2', 'n-a', 0.99),
      edge('s1', 's2', 0.99),
    ];
    expect(expandCandidates(seeds, edges, 48).map((e) => e.memoryId)).toEqual([
      's1',
      's2',
      'n-y',
      'n-a',
      'n-z',
      'n-b',
    ]);
  });

  it('keeps the best proposal of a neighbour reached twice and cuts at M', () => {
    const edges = [
      edge('s2', 'n', 0.99),
      edge('s1', 'n', 0.5, ['semantic_knn']),
      edge('s1', 'm', 0.6, ['semantic_knn']),
    ];
    const pool = expandCandidates(seeds, edges, 3);
    expect(pool.map((e) => e.memoryId)).toEqual(['s1', 's2', 'n']);
    expect(pool[2]).toMatchObject({ kind: 'expanded', parentId: 's2', strength: 0.99 });
    // The winning edge's types, copied (the pool entry never shares the edge's array).
    const entry = pool[2] as Extract<(typeof pool)[number], { kind: 'expanded' }>;
    expect(entry.relationTypes).toEqual(['same_round']);
    expect(entry.relationTypes).not.toBe(edges[0]!.types);
  });

  it('gives unscored candidates the floor: lowest retained retrieval score - 0.01', () => {
    const pool = expandCandidates(seeds, [edge('s1', 'x', 0.99), edge('s1', 'y', 0.99)], 48);
    const { scores, floor } = poolScores(
      pool,
      new Map([
        ['s1', 0.9],
        ['s2', 0.8],
        ['y', 0.3],
      ]),
    );
    expect(floor).toBeCloseTo(0.29);
    expect(scores).toEqual([0.9, 0.8, floor, 0.3]);
  });
});
