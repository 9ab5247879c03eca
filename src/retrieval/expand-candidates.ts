import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { ViewKind } from '../types/view.ts';

/** A memory scored by multi-view retrieval (s on the common scale) with the view that gave its max. */
export interface ScoredMemory {
  memoryId: string;
  score: number;
  bestView: ViewKind;
  viewKey: string;
}

export type PoolEntry =
  | { kind: 'seed'; memoryId: string; rank: number; score: number }
  | {
      kind: 'expanded';
      memoryId: string;
      parentId: string;
      parentRank: number;
      relationTypes: RelationType[];
      strength: number;
    };

/**
 * One-hop expansion and the cut to M (method notes 3, paper eq. 5). Seeds come first in retrieval order.
 * Every neighbour of a seed that is not itself a seed is a proposal; a neighbour reached from several seeds
 * keeps its best proposal. Proposals are ordered by (edge strength desc, parent-seed rank asc, id asc), and
 * appended until the pool holds `poolSize` memories. Pure: same inputs, same pool.
 */
export function expandCandidates(
  seeds: readonly { memoryId: string; score: number }[],
  edges: readonly MemoryEdge[],
  poolSize: number,
): PoolEntry[] {
  const pool: PoolEntry[] = seeds
    .slice(0, poolSize)
    .map((seed, rank) => ({ kind: 'seed', memoryId: seed.memoryId, rank, score: seed.score }));
  const rankOf = new Map(seeds.map((seed, rank) => [seed.memoryId, rank]));
  const best = new Map<string, Extract<PoolEntry, { kind: 'expanded' }>>();
  // Both directions of every edge; a proposal (and its copy of the types) is built only when it wins.
  const propose = (from: string, to: string, edge: MemoryEdge): void => {
    const parentRank = rankOf.get(from);
    if (parentRank === undefined || rankOf.has(to)) return;
    const current = best.get(to);
    if (
      current !== undefined &&
      compareProposals({ strength: edge.strength, parentRank, memoryId: to }, current) >= 0
    )
      return;
    best.set(to, {
      kind: 'expanded',
      memoryId: to,
      parentId: from,
      parentRank,
      relationTypes: [...edge.types],
      strength: edge.strength,
    });
  };
  for (const edge of edges) {
    propose(edge.a, edge.b, edge);
    propose(edge.b, edge.a, edge);
  }
  const proposals = [...best.values()].sort(compareProposals);
  for (const proposal of proposals) {
    if (pool.length >= poolSize) break;
    pool.push(proposal);
  }
  return pool;
}

function compareProposals(
  x: { strength: number; parentRank: number; memoryId: string },
  y: { strength: number; parentRank: number; memoryId: string },
): number {
  if (x.strength !== y.strength) return y.strength - x.strength;
  if (x.parentRank !== y.parentRank) return x.parentRank - y.parentRank;
  return x.memoryId < y.memoryId ? -1 : x.memoryId > y.memoryId ? 1 : 0;
}

/**
 * Retrieval scores for the pool: a memory retrieval scored keeps its s; one it did not gets the floor
 * (lowest retained retrieval score - 0.01, method notes 3), "retained" meaning scored members of the pool.
 */
export function poolScores(
  pool: readonly PoolEntry[],
  retrieved: ReadonlyMap<string, number>,
): { scores: number[]; floor: number } {
  const known = pool.map((entry) => retrieved.get(entry.memoryId));
  const present = known.filter((s): s is number => s !== undefined);
  const floor = (present.length > 0 ? Math.min(...present) : 0) - 0.01;
  return { scores: known.map((s) => s ?? floor), floor };
}
