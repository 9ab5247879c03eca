import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CandidateGraph,
  nodeSetObjective,
  OBJECTIVE_TOLERANCE,
  proposeFixedK,
  solveForest,
  UnionFind,
} from '../../src/core/index.ts';
import { arbitraryGraph, shuffled } from './forest-fixtures.ts';

const PROPOSAL = { kappa: 0.2, lambda: 0.1 };

const graphs = fc.oneof(
  arbitraryGraph({ maxNodes: 16, maxEdges: 30 }),
  arbitraryGraph({ maxNodes: 16, maxEdges: 30, tiedPrizes: true }),
);
const budgets = fc.integer({ min: 1, max: 10 });

describe('properties of solveForest on random graphs', () => {
  it('returns a non-empty forest of at most K memories with |F| = |S| - trees', () => {
    fc.assert(
      fc.property(graphs, budgets, (graph, k) => {
        const solution = solveForest(graph, { k });
        const kept = new Set(solution.order);
        expect(kept.size).toBe(solution.order.length);
        expect(kept.size).toBeGreaterThanOrEqual(1);
        expect(kept.size).toBeLessThanOrEqual(k);
        expect(solution.edges.length).toBe(kept.size - solution.trees.length);
        const index = new Map([...kept].map((id, i) => [id, i]));
        const uf = new UnionFind(kept.size);
        for (const edge of solution.edges) {
          expect(kept.has(edge.a) && kept.has(edge.b)).toBe(true);
          expect(uf.union(index.get(edge.a)!, index.get(edge.b)!)).toBe(true); // no cycle
          expect(0.12 - 0.1 * edge.cost).toBeGreaterThan(0);
        }
        // Trees partition the selection, each joined through recorded parent edges.
        expect(solution.trees.flatMap((t) => t.order)).toEqual(solution.order);
        for (const tree of solution.trees) {
          expect(tree.order[0]).toBe(tree.rootId);
          expect(Object.keys(tree.parents).length).toBe(tree.order.length - 1);
        }
        expect(
          solution.trace.dropped.every((id) => solution.trace.proposal.includes(id) && !kept.has(id)),
        ).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('the proposal has min(K, M) memories and admits no improving swap', () => {
    fc.assert(
      fc.property(graphs, budgets, (graph, k) => {
        const proposal = proposeFixedK(graph, { k });
        expect(proposal.selected.length).toBe(Math.min(k, graph.nodes.length));
        const inside = new Set(proposal.selected.map((n) => n.id));
        const value = nodeSetObjective(proposal.selected, graph.edges, PROPOSAL);
        expect(proposal.objective).toBeCloseTo(value, 10);
        for (const out of proposal.selected) {
          for (const entering of graph.nodes) {
            if (inside.has(entering.id)) continue;
            const next = [...proposal.selected.filter((n) => n !== out), entering];
            expect(nodeSetObjective(next, graph.edges, PROPOSAL)).toBeLessThanOrEqual(
              value + OBJECTIVE_TOLERANCE,
            );
          }
        }
        let previous = proposal.initialObjective;
        for (const swap of proposal.swaps) {
          expect(swap.objective).toBeGreaterThan(previous);
          previous = swap.objective;
        }
      }),
      { numRuns: 150 },
    );
  });

  it('does not depend on the input order of nodes and edges', () => {
    fc.assert(
      fc.property(graphs, budgets, fc.integer(), (graph, k, seed) => {
        const reordered: CandidateGraph = {
          nodes: shuffled(graph.nodes, seed),
          edges: shuffled(graph.edges, seed + 1).map((e) => (seed % 2 === 0 ? { ...e, a: e.b, b: e.a } : e)),
        };
        const a = solveForest(graph, { k });
        const b = solveForest(reordered, { k });
        expect(b.order).toEqual(a.order);
        expect(b.trace.proposal).toEqual(a.trace.proposal);
        expect(b.trace.swaps.map((s) => [s.out, s.in])).toEqual(a.trace.swaps.map((s) => [s.out, s.in]));
        const key = (e: { a: string; b: string; cost: number }) => [e.a, e.b].sort().join('|') + e.cost;
        expect(b.edges.map(key)).toEqual(a.edges.map(key));
        expect(b.objective).toBeCloseTo(a.objective, 10);
      }),
      { numRuns: 200 },
    );
  });

  it('the refinement never loses to the proposal or to any single proposal memory', () => {
    fc.assert(
      fc.property(graphs, budgets, (graph, k) => {
        const solution = solveForest(graph, { k });
        const proposal = graph.nodes.filter((n) => solution.trace.proposal.includes(n.id));
        const refineParams = { kappa: 0.12, lambda: 0.1 };
        expect(solution.objective).toBeGreaterThanOrEqual(
          nodeSetObjective(proposal, graph.edges, refineParams) - OBJECTIVE_TOLERANCE,
        );
        for (const single of proposal) {
          expect(solution.objective).toBeGreaterThanOrEqual(single.prize - 0.12 - OBJECTIVE_TOLERANCE);
        }
      }),
      { numRuns: 200 },
    );
  });
});
