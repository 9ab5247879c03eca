import { GraphmemixError } from '../errors/index.ts';
import type { CandidateEdge, CandidateNode } from './candidate-graph.ts';
import { bestTreeSubset, type SearchComponent, searchComponent } from './component-search.ts';
import { type GainEdges, gainEdges, type IndexedGraph, indexGraph } from './indexed-graph.ts';
import { kruskalRanks } from './kruskal-forest.ts';
import { type GainParams, OBJECTIVE_TOLERANCE } from './structural-gain.ts';
import { isBetterChoice, type SubsetChoice } from './subset-choice.ts';
import { UnionFind } from './union-find.ts';

/** How the refinement searched: full 2^K enumeration, or exact search per connected component. */
export type RefineMethod = 'enumerate' | 'components';

/** Largest proposal the enumeration method accepts (2^20 Kruskal runs is already about a second). */
export const MAX_ENUMERATION_SIZE = 20;

export interface Refinement {
  /** Kept memories in proposal order. */
  selected: CandidateNode[];
  /** Their maximum-gain forest at kappa, in Kruskal order. */
  edges: CandidateEdge[];
  objective: number;
  /** Proposal memories the refinement removed, in proposal order. */
  dropped: CandidateNode[];
  method: RefineMethod;
}

/**
 * Exact variable-cardinality refinement inside a proposal (paper eq. 13): the best non-empty subset of
 * `proposal` with its Kruskal forest. Ties within 1e-12 prefer fewer memories, then earlier positions in
 * `proposal` (its array order is the proposal order). Both methods return the same answer; 'components'
 * (default) stays fast at K = 24 by splitting on connected components of the positive-gain edges, solving
 * tree components by DP and cyclic ones by branch and bound.
 */
export function refineExact(
  proposal: readonly CandidateNode[],
  edges: readonly CandidateEdge[],
  params: GainParams,
  method: RefineMethod = 'components',
): Refinement {
  return refineOnIndexed(indexGraph(proposal, edges), params, method);
}

/** Refinement on a graph whose node indices are the proposal positions. */
export function refineOnIndexed(graph: IndexedGraph, params: GainParams, method: RefineMethod): Refinement {
  const n = graph.nodes.length;
  if (n === 0) return { selected: [], edges: [], objective: 0, dropped: [], method };
  const ranked = gainEdges(graph, params);
  const uf = new UnionFind(n);
  const positions =
    method === 'enumerate' ? enumerate(graph, ranked, params, uf) : byComponents(graph, ranked, params, uf);
  const members = new Uint8Array(n);
  for (const p of positions) members[p] = 1;
  const ranks = kruskalRanks(ranked, members, uf);
  let objective = 0;
  for (const p of positions) objective += graph.nodes[p]!.prize - params.kappa;
  for (const r of ranks) objective += ranked.gain[r]!;
  return {
    selected: positions.map((p) => graph.nodes[p]!),
    edges: ranks.map((r) => graph.edges[ranked.byRank[r]!]!),
    objective,
    dropped: graph.nodes.filter((_, i) => members[i] === 0),
    method,
  };
}

function byComponents(graph: IndexedGraph, ranked: GainEdges, params: GainParams, uf: UnionFind): number[] {
  const components = splitComponents(graph, ranked, params, uf);
  const kept: number[] = [];
  for (const component of components) {
    let choice: SubsetChoice | null;
    if (component.positions.length === 1) {
      // An isolated memory survives only if it pays for its own tree.
      const value = component.weight[0]!;
      choice = value > OBJECTIVE_TOLERANCE ? { value, members: [...component.positions] } : null;
    } else if (component.eu.length === component.positions.length - 1) {
      choice = bestTreeSubset(component);
    } else {
      choice = searchComponent(component, false);
    }
    if (choice !== null) kept.push(...choice.members);
  }
  if (kept.length > 0) return kept.sort((a, b) => a - b);
  // Every component prefers to be empty: the answer is the best non-empty subset of a single component.
  let best: SubsetChoice | null = null;
  for (const component of components) {
    const choice = searchComponent(component, true);
    if (choice !== null && (best === null || isBetterChoice(choice, best))) best = choice;
  }
  return best === null ? [] : best.members;
}

function splitComponents(
  graph: IndexedGraph,
  ranked: GainEdges,
  params: GainParams,
  uf: UnionFind,
): SearchComponent[] {
  const n = graph.nodes.length;
  kruskalRanks(ranked, null, uf); // only for its side effect: uf now holds the components
  const byRoot = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const root = uf.find(i);
    const list = byRoot.get(root);
    if (list === undefined) byRoot.set(root, [i]);
    else list.push(i);
  }
  const local = new Int32Array(n);
  const components = [...byRoot.values()];
  const edgeLists = components.map(() => ({ eu: [] as number[], ev: [] as number[], gain: [] as number[] }));
  const componentOf = new Int32Array(n);
  components.forEach((positions, c) => {
    positions.forEach((p, i) => {
      local[p] = i;
      componentOf[p] = c;
    });
  });
  const seenPairs = new Set<number>();
  for (let r = 0; r < ranked.byRank.length; r++) {
    const a = ranked.lo[r]!;
    const b = ranked.hi[r]!;
    const key = Math.min(a, b) * n + Math.max(a, b);
    if (seenPairs.has(key)) continue; // a parallel edge later in Kruskal order is never used
    seenPairs.add(key);
    const list = edgeLists[componentOf[a]!]!;
    list.eu.push(local[a]!);
    list.ev.push(local[b]!);
    list.gain.push(ranked.gain[r]!);
  }
  return components.map((positions, c) => ({
    positions,
    weight: Float64Array.from(positions, (p) => graph.nodes[p]!.prize - params.kappa),
    eu: Int32Array.from(edgeLists[c]!.eu),
    ev: Int32Array.from(edgeLists[c]!.ev),
    gain: Float64Array.from(edgeLists[c]!.gain),
  }));
}

/** Reference method: every non-empty subset, each with its own Kruskal; then the tie rules. */
function enumerate(graph: IndexedGraph, ranked: GainEdges, params: GainParams, uf: UnionFind): number[] {
  const n = graph.nodes.length;
  if (n > MAX_ENUMERATION_SIZE) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `enumeration refinement is limited to ${MAX_ENUMERATION_SIZE} memories, got ${n}`,
      { location: { field: 'k' } },
    );
  }
  const members = new Uint8Array(n);
  let best: SubsetChoice | null = null;
  for (let mask = 1; mask < 1 << n; mask++) {
    let value = 0;
    const list: number[] = [];
    for (let i = 0; i < n; i++) {
      members[i] = (mask >> i) & 1;
      if (members[i] === 1) {
        value += graph.nodes[i]!.prize - params.kappa;
        list.push(i);
      }
    }
    for (const r of kruskalRanks(ranked, members, uf)) value += ranked.gain[r]!;
    const choice = { value, members: list };
    if (best === null || isBetterChoice(choice, best)) best = choice;
  }
  return best === null ? [] : best.members;
}
