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
  // Scratch of every bestSwap call (|S| stays `size`, so the swap table keeps its shape).
  const workspace: SwapWorkspace = {
    values: new Float64Array(size * (m - size)),
    joining: {
      ranks: new Int32Array(edges.byRank.length),
      ends: new Int32Array(edges.byRank.length),
      count: 0,
    },
    mergeUf: new UnionFind(m),
  };
  for (;;) {
    const swap = bestSwap(graph, edges, members, current.value, params, uf, workspace);
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
  workspace: SwapWorkspace,
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
  const width = outside.length;
  if (width === 0 || inside.length === 0) return null;
  const { values, joining: scratch, mergeUf } = workspace;
  let best = Number.NEGATIVE_INFINITY;
  for (let oi = 0; oi < inside.length; oi++) {
    const out = inside[oi]!;
    members[out] = 0;
    // After this call `uf` holds the trees of the base forest; joinedGain reads them.
    const base = kruskalRanks(edges, members, uf);
    let baseGain = 0;
    for (const r of base) baseGain += edges.gain[r]!;
    const baseValue = nodeSum - (graph.nodes[out]!.prize - params.kappa) - params.kappa;
    let edgelessSeen = false;
    for (let ii = 0; ii < width; ii++) {
      const entering = outside[ii]!;
      const incident = edges.incident[entering]!;
      if (incident.length === 0) {
        // Nodes without positive edges are scored by prize alone and come in rank order, so the first one
        // dominates the rest (higher or equal value, earlier rank): the rest can never be picked.
        if (edgelessSeen) {
          values[oi * width + ii] = Number.NEGATIVE_INFINITY;
          continue;
        }
        edgelessSeen = true;
      }
      scratch.count = 0;
      for (let t = 0; t < incident.length; t++) {
        const r = incident[t]!;
        const other = edges.lo[r] === entering ? edges.hi[r]! : edges.lo[r]!;
        if (members[other] === 1) {
          scratch.ranks[scratch.count] = r;
          scratch.ends[scratch.count] = other;
          scratch.count += 1;
        }
      }
      const gain = scratch.count === 0 ? baseGain : joinedGain(edges, base, baseGain, scratch, uf, mergeUf);
      const value = baseValue + graph.nodes[entering]!.prize + gain;
      values[oi * width + ii] = value;
      if (value > best) best = value;
    }
    members[out] = 1;
  }
  if (!(best > currentValue + OBJECTIVE_TOLERANCE)) return null;
  // Deterministic pick among the near-best: incoming earliest in rank, then outgoing latest in rank.
  for (let ii = 0; ii < width; ii++) {
    for (let oi = inside.length - 1; oi >= 0; oi--) {
      const value = values[oi * width + ii]!;
      if (value >= best - OBJECTIVE_TOLERANCE && value > currentValue + OBJECTIVE_TOLERANCE) {
        return { out: inside[oi]!, in: outside[ii]! };
      }
    }
  }
  return null;
}

/** What bestSwap writes into, allocated once per proposal: every entry it reads was written in the same call. */
interface SwapWorkspace {
  /** Value of each (outgoing, incoming) swap, row-major by the outgoing node's place in S. */
  values: Float64Array;
  joining: JoiningEdges;
  mergeUf: UnionFind;
}

/** The entering node's positive-gain edges into the base node set: ranks ascending, and their far ends. */
interface JoiningEdges {
  ranks: Int32Array;
  ends: Int32Array;
  count: number;
}

/**
 * Gain of the best forest once the entering node's edges join the base forest. When every edge lands in a
 * different base tree the union is itself a forest, so all of them are taken; otherwise a merged Kruskal
 * decides which base edges a cycle pushes out.
 */
function joinedGain(
  edges: GainEdges,
  base: number[],
  baseGain: number,
  joining: JoiningEdges,
  baseTrees: UnionFind,
  mergeUf: UnionFind,
): number {
  let gain = baseGain;
  for (let i = 0; i < joining.count; i++) {
    const tree = baseTrees.find(joining.ends[i]!);
    for (let j = 0; j < i; j++) {
      if (baseTrees.find(joining.ends[j]!) === tree) return mergedForestGain(edges, base, joining, mergeUf);
    }
    gain += edges.gain[joining.ranks[i]!]!;
  }
  return gain;
}

/** Kruskal over the base forest and the joining edges merged in rank order; returns the gain. */
function mergedForestGain(edges: GainEdges, forest: number[], joining: JoiningEdges, uf: UnionFind): number {
  uf.reset();
  let gain = 0;
  let i = 0;
  let j = 0;
  while (i < forest.length || j < joining.count) {
    const r =
      j >= joining.count || (i < forest.length && forest[i]! < joining.ranks[j]!)
        ? forest[i++]!
        : joining.ranks[j++]!;
    if (uf.union(edges.lo[r]!, edges.hi[r]!)) gain += edges.gain[r]!;
  }
  return gain;
}
