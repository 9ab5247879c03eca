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
  const rankOf = new Map<string, number>();
  for (let rank = 0; rank < seeds.length; rank++) rankOf.set(seeds[rank]!.memoryId, rank);
  const best = new Map<string, Proposal>();
  // Both directions of every edge; the pool entry (and its copy of the types) is built only for a proposal
  // that enters the pool.
  const propose = (from: string, to: string, edge: MemoryEdge): void => {
    const parentRank = rankOf.get(from);
    if (parentRank === undefined || rankOf.has(to)) return;
    const current = best.get(to);
    if (current !== undefined && compareTo(edge.strength, parentRank, to, current) >= 0) return;
    best.set(to, { memoryId: to, parentId: from, parentRank, strength: edge.strength, edge });
  };
  for (const edge of edges) {
    propose(edge.a, edge.b, edge);
    propose(edge.b, edge.a, edge);
  }
  const proposals = [...best.values()].sort(compareProposals);
  for (const proposal of proposals) {
    if (pool.length >= poolSize) break;
    pool.push({
      kind: 'expanded',
      memoryId: proposal.memoryId,
      parentId: proposal.parentId,
      parentRank: proposal.parentRank,
      relationTypes: [...proposal.edge.types],
      strength: proposal.strength,
    });
  }
  return pool;
}

/** A neighbour's best proposal so far: the edge it came by (its types are copied only into the pool). */
interface Proposal {
  memoryId: string;
  parentId: string;
  parentRank: number;
  strength: number;
  edge: MemoryEdge;
}

/** compareProposals of a would-be proposal (its fields) against a kept one, without building it. */
function compareTo(strength: number, parentRank: number, memoryId: string, y: Proposal): number {
  if (strength !== y.strength) return y.strength - strength;
  if (parentRank !== y.parentRank) return parentRank - y.parentRank;
  return memoryId < y.memoryId ? -1 : memoryId > y.memoryId ? 1 : 0;
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
