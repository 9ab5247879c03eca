import fc from 'fast-check';
import type { CandidateEdge, CandidateGraph, CandidateNode, EdgeRole } from '../../src/core/index.ts';
import {
  ecvEdgeWeight,
  edgeCostFromWeight,
  type GainParams,
  nodeSetObjective,
  OBJECTIVE_TOLERANCE,
} from '../../src/core/index.ts';

/** An ECV-shaped edge from its incremental support s_inc. */
export function ecvEdge(a: string, b: string, sInc: number, role: EdgeRole = 'new_fact'): CandidateEdge {
  const weight = ecvEdgeWeight(sInc);
  return {
    a,
    b,
    weight,
    cost: edgeCostFromWeight(weight),
    relationTypes: ['same_round'],
    role,
    incrementalSupport: sInc,
  };
}

export function node(id: string, position: number, prize: number): CandidateNode {
  return { id, position, prize };
}

export interface GraphShape {
  maxNodes: number;
  maxEdges: number;
  /** Draw prizes from a small set so exact ties happen; otherwise continuous. */
  tiedPrizes?: boolean;
  /** Shift prizes down so most nodes sit near or below kappa (exercises the branch and bound). */
  lowPrizes?: boolean;
}

/** Random candidate graphs: ids in pool order, parallel edges, edges to unknown ids, self-loops. */
export function arbitraryGraph(shape: GraphShape): fc.Arbitrary<CandidateGraph> {
  const prize = shape.tiedPrizes
    ? fc.integer({ min: 1, max: 15 }).map((k) => k / 16)
    : shape.lowPrizes
      ? micro(10_000, 300_000)
      : micro(10_000, 990_000);
  return fc.array(prize, { minLength: 1, maxLength: shape.maxNodes }).chain((prizes) => {
    const n = prizes.length;
    const nodes = prizes.map((p, i) => node(`m${String(i).padStart(2, '0')}`, i, p));
    const endpoint = fc.integer({ min: 0, max: n }); // n means an id outside the node set
    const edge = fc.record({ a: endpoint, b: endpoint, s: fc.integer({ min: 1, max: 5 }) });
    return fc.array(edge, { maxLength: shape.maxEdges }).map((raw) => ({
      nodes,
      edges: raw.map(({ a, b, s }) => ecvEdge(idOf(a, n), idOf(b, n), s)),
    }));
  });
}

/** Dense graphs: every pair joined with probability ~0.6, prizes around kappa. */
export function arbitraryDenseGraph(
  maxNodes: number,
  minNodes = 2,
  tied = false,
): fc.Arbitrary<CandidateGraph> {
  const prize = tied ? fc.constantFrom(...TIE_PRIZES) : micro(0, 250_000);
  return fc.array(prize, { minLength: minNodes, maxLength: maxNodes }).chain((prizes) => {
    const n = prizes.length;
    const pairs = (n * (n - 1)) / 2;
    return fc.array(fc.integer({ min: 0, max: 8 }), { minLength: pairs, maxLength: pairs }).map((levels) => {
      const nodes = prizes.map((p, i) => node(`d${String(i).padStart(2, '0')}`, i, p));
      const edges: CandidateEdge[] = [];
      let k = 0;
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          const level = levels[k++]!;
          if (level >= 2 && level <= 6) edges.push(ecvEdge(nodes[i]!.id, nodes[j]!.id, level - 1));
        }
      }
      return { nodes, edges };
    });
  });
}

/**
 * Prizes that create exact ties: a few dyadic values, and kappa - B for each edge level, where joining a
 * memory by that edge adds exactly nothing (so "fewer memories" must decide).
 */
const TIE_PRIZES = [
  0,
  1 / 16,
  2 / 16,
  3 / 16,
  ...[2, 3, 4, 5].map((s) => 0.1 * edgeCostFromWeight(ecvEdgeWeight(s))),
];

/**
 * Prizes on a 1e-6 grid: values either tie exactly or differ far beyond the 1e-12 tie tolerance. Raw doubles
 * from fast-check cluster at the range ends (e.g. 1e-13 apart), where "within 1e-12" stops being transitive
 * and the brute-force definition (max, then filter) and any pairwise tie rule may legitimately differ.
 */
function micro(min: number, max: number): fc.Arbitrary<number> {
  return fc.integer({ min, max }).map((x) => x / 1_000_000);
}

function idOf(i: number, n: number): string {
  return i === n ? 'unknown' : `m${String(i).padStart(2, '0')}`;
}

/** Deterministic shuffle for order-independence checks (tests may use randomness; the core may not). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Best forest gain of a fixed node set by enumerating every edge subset (reference for Kruskal). */
export function bruteForestGain(
  nodes: readonly CandidateNode[],
  edges: readonly CandidateEdge[],
  params: GainParams,
): number {
  const ids = new Set(nodes.map((n) => n.id));
  const usable = edges.filter((e) => ids.has(e.a) && ids.has(e.b) && e.a !== e.b);
  let best = 0;
  for (let mask = 0; mask < 1 << usable.length; mask++) {
    const parent = new Map<string, string>();
    const find = (x: string): string => {
      while (parent.has(x)) x = parent.get(x)!;
      return x;
    };
    let gain = 0;
    let acyclic = true;
    for (let e = 0; e < usable.length && acyclic; e++) {
      if (((mask >> e) & 1) === 0) continue;
      const edge = usable[e]!;
      const ra = find(edge.a);
      const rb = find(edge.b);
      if (ra === rb) acyclic = false;
      else parent.set(ra, rb);
      gain += params.kappa - params.lambda * edge.cost;
    }
    if (acyclic && gain > best) best = gain;
  }
  return best;
}

/**
 * Refinement by definition: every non-empty subset; the maximum value; among subsets within 1e-12 of it,
 * fewest members, then the lexicographically smallest sorted list of proposal positions.
 */
export function bruteRefine(
  proposal: readonly CandidateNode[],
  edges: readonly CandidateEdge[],
  params: GainParams,
): string[] {
  const n = proposal.length;
  const values: number[] = [0];
  for (let mask = 1; mask < 1 << n; mask++) {
    values.push(nodeSetObjective(pick(proposal, mask), edges, params));
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let mask = 1; mask < 1 << n; mask++) max = Math.max(max, values[mask]!);
  let best = -1;
  for (let mask = 1; mask < 1 << n; mask++) {
    if (values[mask]! < max - OBJECTIVE_TOLERANCE) continue;
    if (best === -1 || preferMask(mask, best)) best = mask;
  }
  return pick(proposal, best).map((x) => x.id);
}

function preferMask(a: number, b: number): boolean {
  const ca = popcount(a);
  const cb = popcount(b);
  if (ca !== cb) return ca < cb;
  const diff = a ^ b;
  return (a & diff & -diff) !== 0; // holds the smallest position where they differ
}

function popcount(x: number): number {
  let c = 0;
  for (let v = x; v !== 0; v &= v - 1) c++;
  return c;
}

function pick<T>(items: readonly T[], mask: number): T[] {
  return items.filter((_, i) => ((mask >> i) & 1) === 1);
}

/**
 * The fixed-K proposal by its definition: every swap scored by a full Kruskal; best strict improvement;
 * among swaps within 1e-12 of the best, the incoming node earliest in rank, then the outgoing latest.
 */
export function naiveProposal(graph: CandidateGraph, k: number, params: GainParams) {
  const ranked = [...graph.nodes].sort(
    (a, b) => b.prize - a.prize || a.position - b.position || (a.id < b.id ? -1 : 1),
  );
  const size = Math.min(k, ranked.length);
  let selected = new Set(ranked.slice(0, size).map((n) => n.id));
  const objectiveOf = (ids: Set<string>) =>
    nodeSetObjective(
      ranked.filter((n) => ids.has(n.id)),
      graph.edges,
      params,
    );
  let current = objectiveOf(selected);
  const swaps: { out: string; in: string }[] = [];
  for (;;) {
    const inside = ranked.filter((n) => selected.has(n.id));
    const outside = ranked.filter((n) => !selected.has(n.id));
    const scored: { out: number; in: number; value: number }[] = [];
    inside.forEach((o, oi) => {
      outside.forEach((x, ii) => {
        const next = new Set(selected);
        next.delete(o.id);
        next.add(x.id);
        scored.push({ out: oi, in: ii, value: objectiveOf(next) });
      });
    });
    const max = Math.max(...scored.map((s) => s.value));
    if (!(max > current + OBJECTIVE_TOLERANCE)) break;
    const chosen = scored
      .filter((s) => s.value >= max - OBJECTIVE_TOLERANCE && s.value > current + OBJECTIVE_TOLERANCE)
      .sort((a, b) => a.in - b.in || b.out - a.out)[0]!;
    const outId = inside[chosen.out]!.id;
    const inId = outside[chosen.in]!.id;
    selected = new Set(selected);
    selected.delete(outId);
    selected.add(inId);
    swaps.push({ out: outId, in: inId });
    current = objectiveOf(selected);
  }
  return { selected: ranked.filter((n) => selected.has(n.id)).map((n) => n.id), swaps, objective: current };
}
