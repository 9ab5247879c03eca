import { GraphmemixError } from '../errors/index.ts';
import type { CandidateEdge, CandidateNode } from './candidate-graph.ts';
import type { GainParams } from './structural-gain.ts';

/**
 * The solver's internal view of a candidate graph: nodes addressed by integer index (in an order chosen by
 * the caller), edges reduced to the usable ones, and for a given (kappa, lambda) the positive-gain edges in
 * Kruskal order. Built once per solve so the inner loops touch only typed arrays.
 */
export interface IndexedGraph {
  nodes: readonly CandidateNode[];
  indexOf: ReadonlyMap<string, number>;
  /** Usable edges: both endpoints present, not a self-loop. */
  edges: readonly CandidateEdge[];
  /** Endpoints of edges[e]: lo is the endpoint that comes first by (position, id). */
  lo: Int32Array;
  hi: Int32Array;
}

/** Positive-gain edges for one (kappa, lambda), sorted into the deterministic Kruskal order. */
export interface GainEdges {
  /** Edge ids (into IndexedGraph.edges) in Kruskal order; the rank of an edge is its place here. */
  byRank: Int32Array;
  lo: Int32Array;
  hi: Int32Array;
  gain: Float64Array;
  /** For each node, the ranks of its positive-gain edges, ascending (plain arrays: ~48 small lists a solve). */
  incident: readonly (readonly number[])[];
}

/**
 * Node rank order used to seed the proposal and to break ties: prize desc, then pool position asc, then
 * id asc (code-unit order, so the result never depends on the locale).
 */
export function compareNodeRank(a: CandidateNode, b: CandidateNode): number {
  if (a.prize !== b.prize) return b.prize - a.prize;
  return comparePosition(a, b);
}

/** Pool position asc, then id asc. */
export function comparePosition(a: CandidateNode, b: CandidateNode): number {
  if (a.position !== b.position) return a.position - b.position;
  return compareText(a.id, b.id);
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Checks nodes, edges and indexes them in the given node order. Throws INVALID_INPUT on bad data. */
export function indexGraph(nodes: readonly CandidateNode[], edges: readonly CandidateEdge[]): IndexedGraph {
  const indexOf = new Map<string, number>();
  nodes.forEach((node, i) => {
    if (indexOf.has(node.id)) invalid(`duplicate candidate id ${node.id}`, node.id);
    if (!Number.isFinite(node.prize)) invalid(`prize of ${node.id} is not a finite number`, node.id);
    if (!Number.isFinite(node.position)) invalid(`position of ${node.id} is not a finite number`, node.id);
    indexOf.set(node.id, i);
  });
  const usable: CandidateEdge[] = [];
  const lo: number[] = [];
  const hi: number[] = [];
  for (const edge of edges) {
    if (!Number.isFinite(edge.cost) || edge.cost < 0) {
      invalid(`edge ${edge.a}-${edge.b} has cost ${edge.cost}; costs must be finite and >= 0`, edge.a);
    }
    const ia = indexOf.get(edge.a);
    const ib = indexOf.get(edge.b);
    // Edges may mention memories outside this node set (e.g. a dropped candidate): they cannot be used.
    if (ia === undefined || ib === undefined || ia === ib) continue;
    const aFirst = comparePosition(nodes[ia]!, nodes[ib]!) < 0;
    usable.push(edge);
    lo.push(aFirst ? ia : ib);
    hi.push(aFirst ? ib : ia);
  }
  return { nodes, indexOf, edges: usable, lo: Int32Array.from(lo), hi: Int32Array.from(hi) };
}

/**
 * Kruskal order of the positive-gain edges. Tie-break, documented because it decides which of several
 * equal-gain edges joins a tree: gain desc; then the pool position of the endpoint that comes first, then of
 * the other endpoint; then their ids; then cost, role, relation types, weight, s_inc. Edges equal on all of
 * these are interchangeable, so the result never depends on input order.
 */
export function gainEdges(graph: IndexedGraph, params: GainParams): GainEdges {
  const gainById = graph.edges.map((edge) => params.kappa - params.lambda * edge.cost);
  const ids: number[] = [];
  gainById.forEach((gain, e) => {
    if (gain > 0) ids.push(e);
  });
  ids.sort((x, y) => compareEdgeOrder(graph, gainById, x, y));
  const n = ids.length;
  const byRank = Int32Array.from(ids);
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  const gain = new Float64Array(n);
  const incidentLists: number[][] = graph.nodes.map(() => []);
  for (let r = 0; r < n; r++) {
    const e = byRank[r]!;
    lo[r] = graph.lo[e]!;
    hi[r] = graph.hi[e]!;
    gain[r] = gainById[e]!;
    incidentLists[lo[r]!]!.push(r);
    incidentLists[hi[r]!]!.push(r);
  }
  return { byRank, lo, hi, gain, incident: incidentLists };
}

function compareEdgeOrder(graph: IndexedGraph, gainById: readonly number[], x: number, y: number): number {
  const gx = gainById[x]!;
  const gy = gainById[y]!;
  if (gx !== gy) return gy - gx;
  const nodes = graph.nodes;
  const byLo = comparePosition(nodes[graph.lo[x]!]!, nodes[graph.lo[y]!]!);
  if (byLo !== 0) return byLo;
  const byHi = comparePosition(nodes[graph.hi[x]!]!, nodes[graph.hi[y]!]!);
  if (byHi !== 0) return byHi;
  const ex = graph.edges[x]!;
  const ey = graph.edges[y]!;
  if (ex.cost !== ey.cost) return ex.cost - ey.cost;
  return (
    compareText(ex.role, ey.role) ||
    compareText(ex.relationTypes.join(','), ey.relationTypes.join(',')) ||
    ex.weight - ey.weight ||
    (ex.incrementalSupport ?? -1) - (ey.incrementalSupport ?? -1)
  );
}

function invalid(message: string, recordId: string): never {
  throw new GraphmemixError('INVALID_INPUT', message, { location: { recordId } });
}
