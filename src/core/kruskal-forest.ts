import type { CandidateEdge, CandidateNode } from './candidate-graph.ts';
import { type GainEdges, gainEdges, indexGraph } from './indexed-graph.ts';
import type { GainParams } from './structural-gain.ts';
import { UnionFind } from './union-find.ts';

/** The best forest of a fixed node set. */
export interface KruskalResult {
  /** Chosen edges in the order Kruskal accepted them (gain desc, documented tie-break). */
  edges: CandidateEdge[];
  /** Sum of their structural gains B_e. */
  gain: number;
}

/**
 * Maximum-gain forest over the positive-gain edges among `nodes` (exact for a fixed node set, paper 3.5).
 * Edges whose endpoints are not both in `nodes` are ignored; parallel edges are allowed.
 */
export function kruskalForest(
  nodes: readonly CandidateNode[],
  edges: readonly CandidateEdge[],
  params: GainParams,
): KruskalResult {
  const graph = indexGraph(nodes, edges);
  const ranked = gainEdges(graph, params);
  const accepted = kruskalRanks(ranked, null, new UnionFind(nodes.length));
  let gain = 0;
  for (const r of accepted) gain += ranked.gain[r]!;
  return { edges: accepted.map((r) => graph.edges[ranked.byRank[r]!]!), gain };
}

/**
 * Objective of a node set with a given forest: sum (p_i - kappa) + sum B_e (paper eq. 12). The caller
 * supplies an acyclic edge set (e.g. from kruskalForest); nothing here checks that.
 */
export function forestObjective(
  nodes: readonly CandidateNode[],
  forestEdges: readonly CandidateEdge[],
  params: GainParams,
): number {
  let value = 0;
  for (const node of nodes) value += node.prize - params.kappa;
  for (const edge of forestEdges) value += params.kappa - params.lambda * edge.cost;
  return value;
}

/** Objective of a node set with its best forest. */
export function nodeSetObjective(
  nodes: readonly CandidateNode[],
  edges: readonly CandidateEdge[],
  params: GainParams,
): number {
  return forestObjective(nodes, kruskalForest(nodes, edges, params).edges, params);
}

/**
 * Kruskal over ranked edges, keeping only edges with both endpoints flagged in `members` (all when null).
 * Returns the accepted ranks in ascending order. `uf` is reset here and must cover every node index.
 */
export function kruskalRanks(ranked: GainEdges, members: Uint8Array | null, uf: UnionFind): number[] {
  uf.reset();
  const accepted: number[] = [];
  const n = ranked.byRank.length;
  for (let r = 0; r < n; r++) {
    const a = ranked.lo[r]!;
    const b = ranked.hi[r]!;
    if (members !== null && (members[a] === 0 || members[b] === 0)) continue;
    if (uf.union(a, b)) accepted.push(r);
  }
  return accepted;
}
