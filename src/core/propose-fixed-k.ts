import type {
  CandidateEdge,
  CandidateGraph,
  CandidateNode,
  SolverParams,
  SwapStep,
} from './candidate-graph.ts';
import {
  compareNodeRank,
  type GainEdges,
  gainEdges,
  type IndexedGraph,
  indexGraph,
} from './indexed-graph.ts';
import { kruskalRanks } from './kruskal-forest.ts';
import { resolveSolverParams } from './solver-params.ts';
import { type GainParams, OBJECTIVE_TOLERANCE } from './structural-gain.ts';
import { UnionFind } from './union-find.ts';

/** The fixed-K proposal (paper 3.5, first stage) with its search history. */
export interface FixedKProposal {
  /** Top-K by (prize desc, position asc, id asc). */
  initial: CandidateNode[];
  initialObjective: number;
  /** Accepted swaps in order, each with the objective (at kappaProposal) after it. */
  swaps: SwapStep[];
  /** The 1-swap local optimum in rank order; an index here is a node's "proposal position". */
  selected: CandidateNode[];
  /** Its maximum-gain forest at kappaProposal, in Kruskal order. */
  edges: CandidateEdge[];
  objective: number;
}

/**
 * Fixed-cardinality proposal: |S| = min(K, M), steepest-ascent 1-swap where every (selected out, unselected
 * in) pair is scored with its own exact Kruskal forest, until no swap improves by more than 1e-12.
 * Tie-break among equal-best swaps (within 1e-12): the incoming node earliest in rank order, then the
 * outgoing node latest in rank order (drop the weakest).
 */
export function proposeFixedK(graph: CandidateGraph, params: Partial<SolverParams> = {}): FixedKProposal {
  const resolved = resolveSolverParams(params);
  const ranked = indexGraph([...graph.nodes].sort(compareNodeRank), graph.edges);
  return proposeOnIndexed(ranked, resolved.k, { kappa: resolved.kappaProposal, lambda: resolved.lambda });
}

/** Proposal on a graph whose node indices are already in rank order. */
export function proposeOnIndexed(graph: IndexedGraph, k: number, params: GainParams): FixedKProposal {
  const m = graph.nodes.length;
  const size = Math.min(k, m);
  const edges = gainEdges(graph, params);
  const uf = new UnionFind(m);
  const members = new Uint8Array(m);
  for (let i = 0; i < size; i++) members[i] = 1;
  const evaluate = (): { value: number; ranks: number[] } => {
    const ranks = kruskalRanks(edges, members, uf);
    let value = 0;
    for (let i = 0; i < m; i++) if (members[i] === 1) value += graph.nodes[i]!.prize - params.kappa;
    for (const r of ranks) value += edges.gain[r]!;
    return { value, ranks };
  };
  const initial = graph.nodes.slice(0, size);
  let current = evaluate();
  const initialObjective = current.value;
  const swaps: SwapStep[] = [];
  for (;;) {
    const swap = bestSwap(graph, edges, members, current.value, params, uf);
    if (swap === null) break;
    members[swap.out] = 0;
    members[swap.in] = 1;
    current = evaluate();
    swaps.push({ out: graph.nodes[swap.out]!.id, in: graph.nodes[swap.in]!.id, objective: current.value });
  }
  const selected = graph.nodes.filter((_, i) => members[i] === 1);
  return {
    initial,
    initialObjective,
    swaps,
    selected,
    edges: current.ranks.map((r) => graph.edges[edges.byRank[r]!]!),
    objective: current.value,
  };
}

/**
 * Scores every swap and returns the chosen strict improvement, or null at a local optimum.
 * Incremental but exact: for a fixed outgoing node the forest of S \ {out} is built once; by the cycle
 * property the best forest of S \ {out} + {in} is then Kruskal over that forest's edges plus the incoming
 * node's edges into S \ {out}, so each swap costs O(K + deg) instead of O(E). With a strict edge order the
 * maximum forest is unique, so the chosen edges are exactly those of a full Kruskal.
 */
function bestSwap(
  graph: IndexedGraph,
  edges: GainEdges,
  members: Uint8Array,
  currentValue: number,
  params: GainParams,
  uf: UnionFind,
): { out: number; in: number } | null {
  const m = graph.nodes.length;
  const inside: number[] = [];
  const outside: number[] = [];
  let nodeSum = 0;
  for (let i = 0; i < m; i++) {
    if (members[i] === 1) {
      inside.push(i);
      nodeSum += graph.nodes[i]!.prize - params.kappa;
    } else outside.push(i);
  }
  if (outside.length === 0 || inside.length === 0) return null;
  const values = new Float64Array(inside.length * outside.length);
  let best = Number.NEGATIVE_INFINITY;
  const scratch: number[] = [];
  inside.forEach((out, oi) => {
    members[out] = 0;
    const base = kruskalRanks(edges, members, uf);
    let baseGain = 0;
    for (const r of base) baseGain += edges.gain[r]!;
    const baseNodes = nodeSum - (graph.nodes[out]!.prize - params.kappa);
    outside.forEach((entering, ii) => {
      scratch.length = 0;
      for (const r of edges.incident[entering]!) {
        const other = edges.lo[r] === entering ? edges.hi[r]! : edges.lo[r]!;
        if (members[other] === 1) scratch.push(r);
      }
      const gain = scratch.length === 0 ? baseGain : mergedForestGain(edges, base, scratch, uf);
      const value = baseNodes + graph.nodes[entering]!.prize - params.kappa + gain;
      values[oi * outside.length + ii] = value;
      if (value > best) best = value;
    });
    members[out] = 1;
  });
  if (!(best > currentValue + OBJECTIVE_TOLERANCE)) return null;
  // Deterministic pick among the near-best: incoming earliest in rank, then outgoing latest in rank.
  for (let ii = 0; ii < outside.length; ii++) {
    for (let oi = inside.length - 1; oi >= 0; oi--) {
      const value = values[oi * outside.length + ii]!;
      if (value >= best - OBJECTIVE_TOLERANCE && value > currentValue + OBJECTIVE_TOLERANCE) {
        return { out: inside[oi]!, in: outside[ii]! };
      }
    }
  }
  return null;
}

/** Kruskal over two rank-sorted edge lists merged (a forest plus one node's edges); returns the gain. */
function mergedForestGain(edges: GainEdges, forest: number[], extra: number[], uf: UnionFind): number {
  uf.reset();
  let gain = 0;
  let i = 0;
  let j = 0;
  while (i < forest.length || j < extra.length) {
    const r = j >= extra.length || (i < forest.length && forest[i]! < extra[j]!) ? forest[i++]! : extra[j++]!;
    if (uf.union(edges.lo[r]!, edges.hi[r]!)) gain += edges.gain[r]!;
  }
  return gain;
}
