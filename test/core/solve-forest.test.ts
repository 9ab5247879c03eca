import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SOLVER_PARAMS,
  ecvEdgeWeight,
  edgeCostFromWeight,
  forestObjective,
  kruskalForest,
  proposeFixedK,
  refineExact,
  serializeForest,
  solveForest,
  structuralGain,
} from '../../src/core/index.ts';
import { isGraphmemixError } from '../../src/errors/index.ts';
import { ecvEdge, node } from './forest-fixtures.ts';

const PROPOSAL = { kappa: 0.2, lambda: 0.1 };
const REFINE = { kappa: 0.12, lambda: 0.1 };

describe('edge weights and gains', () => {
  it('maps s_inc to weight and cost, flooring the weight', () => {
    expect(ecvEdgeWeight(5)).toBeCloseTo(0.99, 12);
    expect(ecvEdgeWeight(1)).toBeCloseTo(0.198, 12);
    expect(edgeCostFromWeight(0.99)).toBeCloseTo(-Math.log(0.99), 12);
    expect(edgeCostFromWeight(0)).toBeCloseTo(-Math.log(1e-6), 12);
  });

  it('an s_inc = 1 edge gains +0.038 at kappa 0.2 and -0.042 at kappa 0.12', () => {
    const edge = ecvEdge('a', 'b', 1);
    expect(structuralGain(edge, PROPOSAL)).toBeCloseTo(0.038, 3);
    expect(structuralGain(edge, REFINE)).toBeCloseTo(-0.042, 3);
  });
});

describe('solveForest on hand-made graphs', () => {
  it('the s_inc = 1 edge brings a memory into the proposal that the refinement drops', () => {
    const nodes = [node('A', 0, 0.9), node('X', 1, 0.14), node('Y', 2, 0.11)];
    const edges = [ecvEdge('A', 'Y', 1)];
    const solution = solveForest({ nodes, edges }, { k: 2 });
    // Without the edge Y (0.11) would lose to X (0.14); with it Y is worth -0.09 + 0.038 > -0.06.
    expect(solution.trace.initial).toEqual(['A', 'X']);
    expect(solution.trace.swaps.map((s) => [s.out, s.in])).toEqual([['X', 'Y']]);
    expect(solution.trace.proposal).toEqual(['A', 'Y']);
    expect(solution.trace.proposalEdges).toEqual(edges);
    expect(solution.trace.dropped).toEqual(['Y']);
    expect(solution.order).toEqual(['A']);
    expect(solution.edges).toEqual([]);
    expect(solution.objective).toBeCloseTo(0.9 - 0.12, 12);
    expect(solveForest({ nodes, edges: [] }, { k: 2 }).trace.proposal).toEqual(['A', 'X']);
  });

  it('keeps a memory below kappa when a trusted edge pays for it', () => {
    const nodes = [node('A', 0, 0.8), node('B', 1, 0.05)];
    const solution = solveForest({ nodes, edges: [ecvEdge('A', 'B', 5)] });
    // B alone: 0.05 - 0.12 < 0; joined by an s_inc = 5 edge it adds 0.05 - 0.1 * c > 0.
    expect(solution.order).toEqual(['A', 'B']);
    expect(solution.trees).toHaveLength(1);
    expect(solution.trees[0]!.parents.B!.parentId).toBe('A');
  });

  it('returns the whole pool when K is larger than it, with no swaps', () => {
    const nodes = [node('a', 0, 0.5), node('b', 1, 0.6), node('c', 2, 0.3)];
    const solution = solveForest({ nodes, edges: [] }, { k: 10 });
    expect(solution.trace.proposal).toEqual(['b', 'a', 'c']);
    expect(solution.trace.swaps).toEqual([]);
    expect(solution.order).toEqual(['b', 'a', 'c']);
  });

  it('without edges keeps exactly the memories above kappa, one tree each, by prize', () => {
    const prizes = [0.3, 0.9, 0.12, 0.5, 0.05, 0.7];
    const nodes = prizes.map((p, i) => node(`n${i}`, i, p));
    const solution = solveForest({ nodes, edges: [] }, { k: 6 });
    expect(solution.order).toEqual(['n1', 'n5', 'n3', 'n0']);
    expect(solution.trees.map((t) => t.order)).toEqual([['n1'], ['n5'], ['n3'], ['n0']]);
    expect(solution.trace.dropped).toEqual(['n2', 'n4']);
  });

  it('never returns an empty answer: all memories below kappa gives the best single', () => {
    const nodes = [node('a', 0, 0.05), node('b', 1, 0.11), node('c', 2, 0.11)];
    const solution = solveForest({ nodes, edges: [] });
    expect(solution.order).toEqual(['b']); // tie on prize -> earlier pool position
    expect(solution.objective).toBeCloseTo(-0.01, 12);
  });

  it('when every subset is negative the best non-empty subset can be a joined pair (eq. 13)', () => {
    const nodes = ['A', 'B', 'C', 'D'].map((id, i) => node(id, i, 0.05));
    const edges = [ecvEdge('B', 'D', 5), ecvEdge('A', 'C', 5)];
    // Single: -0.07; pair: 0.1 - 0.24 + 0.119 = -0.021. {A,C} and {B,D} tie: earlier positions win.
    const refined = refineExact(nodes, edges, REFINE);
    expect(refined.selected.map((n) => n.id)).toEqual(['A', 'C']);
    expect(refined.objective).toBeLessThan(0);
    expect(refineExact(nodes, edges, REFINE, 'enumerate').selected.map((n) => n.id)).toEqual(['A', 'C']);
  });

  it('all-negative ties inside one cyclic-search component resolve to the earliest position', () => {
    // Regression found by mutation: the search meets {b} first (more optimistic), must still reach {a}.
    const nodes = [
      node('a', 0, 0.1 * ecvEdge('x', 'y', 2).cost),
      node('b', 1, 0.1 * ecvEdge('x', 'y', 2).cost),
    ];
    const hub = node('h', 2, 0);
    const other = node('o', 3, 0.1 * ecvEdge('x', 'y', 3).cost);
    const edges = [ecvEdge('a', 'h', 2), ecvEdge('b', 'h', 3)];
    const refined = refineExact([...nodes, hub, other], edges, REFINE);
    expect(refined.selected.map((n) => n.id)).toEqual(['a']);
  });

  it('a memory worth exactly kappa is dropped (ties prefer fewer memories)', () => {
    const nodes = [node('a', 0, 0.5), node('b', 1, 0.25)];
    const refined = refineExact(nodes, [], { kappa: 0.25, lambda: 0.1 });
    expect(refined.selected.map((n) => n.id)).toEqual(['a']);
  });

  it('returns an empty solution for an empty pool', () => {
    const solution = solveForest({ nodes: [], edges: [] });
    expect(solution.order).toEqual([]);
    expect(solution.objective).toBe(0);
  });

  it('ignores edges to unknown ids and self-loops, and uses the better of parallel edges', () => {
    const nodes = [node('a', 0, 0.6), node('b', 1, 0.4)];
    const weak = ecvEdge('a', 'b', 3);
    const strong = ecvEdge('b', 'a', 5);
    const result = kruskalForest(nodes, [ecvEdge('a', 'zz', 5), ecvEdge('a', 'a', 5), weak, strong], REFINE);
    expect(result.edges).toEqual([strong]);
    expect(result.gain).toBeCloseTo(structuralGain(strong, REFINE), 12);
  });

  it('breaks equal-gain Kruskal ties by endpoint pool positions', () => {
    const nodes = [node('x', 2, 0.5), node('y', 0, 0.5), node('z', 1, 0.5)];
    // A triangle of equal edges: positions (0,1) and (0,2) come first; (1,2) closes the cycle.
    const yz = ecvEdge('y', 'z', 4);
    const xy = ecvEdge('x', 'y', 4);
    const xz = ecvEdge('z', 'x', 4);
    expect(kruskalForest(nodes, [xz, xy, yz], REFINE).edges).toEqual([yz, xy]);
  });

  it('breaks equal swaps toward the earliest incoming node and drops the weakest', () => {
    // c and d are equal and both improve on b only through their edge to a.
    const nodes = [node('a', 0, 0.9), node('b', 1, 0.15), node('c', 2, 0.14), node('d', 3, 0.14)];
    const edges = [ecvEdge('a', 'd', 5), ecvEdge('a', 'c', 5)];
    const proposal = proposeFixedK({ nodes, edges }, { k: 2 });
    expect(proposal.swaps.map((s) => [s.out, s.in])).toEqual([['b', 'c']]);
    expect(proposal.selected.map((n) => n.id)).toEqual(['a', 'c']);
  });

  it('serializes breadth-first: root = best prize, trees by root, children by prize then position', () => {
    const nodes = [
      node('r', 5, 0.9),
      node('c1', 1, 0.4),
      node('c2', 0, 0.4),
      node('g', 2, 0.7),
      node('s', 3, 0.8),
      node('t', 4, 0.3),
    ];
    const e1 = ecvEdge('c1', 'r', 5);
    const e2 = ecvEdge('r', 'c2', 5);
    const e3 = ecvEdge('c1', 'g', 5);
    const e4 = ecvEdge('t', 's', 5);
    const out = serializeForest(nodes, [e1, e2, e3, e4]);
    expect(out.trees.map((t) => t.rootId)).toEqual(['r', 's']);
    expect(out.trees[0]!.order).toEqual(['r', 'c2', 'c1', 'g']);
    expect(out.order).toEqual(['r', 'c2', 'c1', 'g', 's', 't']);
    expect(out.trees[0]!.parents.g).toEqual({ parentId: 'c1', edge: e3 });
    expect(out.trees[1]!.parents.t).toEqual({ parentId: 's', edge: e4 });
  });

  it('reports the objective of the returned forest', () => {
    const nodes = [node('a', 0, 0.7), node('b', 1, 0.3), node('c', 2, 0.08)];
    const edges = [ecvEdge('a', 'c', 4), ecvEdge('b', 'c', 2)];
    const solution = solveForest({ nodes, edges });
    const kept = nodes.filter((n) => solution.order.includes(n.id));
    expect(solution.objective).toBeCloseTo(forestObjective(kept, solution.edges, REFINE), 12);
    expect(solution.trace.finalObjective).toBe(solution.objective);
  });

  it('rejects bad input with INVALID_INPUT', () => {
    const codeOf = (run: () => unknown): string | undefined => {
      try {
        run();
      } catch (error) {
        return isGraphmemixError(error) ? error.code : 'other';
      }
      return undefined;
    };
    const ok = [node('a', 0, 0.5)];
    expect(codeOf(() => solveForest({ nodes: [node('a', 0, 0.5), node('a', 1, 0.4)], edges: [] }))).toBe(
      'INVALID_INPUT',
    );
    expect(codeOf(() => solveForest({ nodes: ok, edges: [] }, { k: 0 }))).toBe('INVALID_INPUT');
    expect(codeOf(() => solveForest({ nodes: ok, edges: [] }, { k: 2.5 }))).toBe('INVALID_INPUT');
    expect(codeOf(() => solveForest({ nodes: ok, edges: [] }, { kappa: Number.NaN }))).toBe('INVALID_INPUT');
    expect(codeOf(() => solveForest({ nodes: [node('a', 0, Number.NaN)], edges: [] }))).toBe('INVALID_INPUT');
    const negative = { ...ecvEdge('a', 'b', 5), cost: -1 };
    expect(codeOf(() => solveForest({ nodes: ok, edges: [negative] }))).toBe('INVALID_INPUT');
    expect(
      codeOf(() =>
        refineExact(
          Array.from({ length: 21 }, (_, i) => node(`x${i}`, i, 0.5)),
          [],
          REFINE,
          'enumerate',
        ),
      ),
    ).toBe('INVALID_INPUT');
    expect(DEFAULT_SOLVER_PARAMS).toEqual({ k: 10, lambda: 0.1, kappaProposal: 0.2, kappa: 0.12 });
  });
});
