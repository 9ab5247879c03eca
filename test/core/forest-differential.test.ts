import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { kruskalForest, proposeFixedK, refineExact } from '../../src/core/index.ts';
import {
  arbitraryDenseGraph,
  arbitraryGraph,
  bruteForestGain,
  bruteRefine,
  naiveProposal,
} from './forest-fixtures.ts';

const REFINE = { kappa: 0.12, lambda: 0.1 };
const PROPOSAL = { kappa: 0.2, lambda: 0.1 };

describe('differential: Kruskal vs every edge subset', () => {
  it('finds the best forest gain of a fixed node set (<= 8 nodes)', () => {
    fc.assert(
      fc.property(arbitraryGraph({ maxNodes: 8, maxEdges: 12 }), fc.boolean(), (graph, atProposal) => {
        const params = atProposal ? PROPOSAL : REFINE;
        const result = kruskalForest(graph.nodes, graph.edges, params);
        expect(result.gain).toBeCloseTo(bruteForestGain(graph.nodes, graph.edges, params), 10);
      }),
      { numRuns: 300 },
    );
  });
});

describe('differential: fixed-K proposal vs its definition with a full Kruskal per swap', () => {
  it('takes the same swaps and ends on the same set', () => {
    fc.assert(
      fc.property(
        arbitraryGraph({ maxNodes: 12, maxEdges: 20 }),
        fc.integer({ min: 1, max: 7 }),
        (graph, k) => {
          const fast = proposeFixedK(graph, { k });
          const naive = naiveProposal(graph, k, PROPOSAL);
          expect(fast.swaps.map((s) => ({ out: s.out, in: s.in }))).toEqual(naive.swaps);
          expect(fast.selected.map((n) => n.id)).toEqual(naive.selected);
          expect(fast.objective).toBeCloseTo(naive.objective, 10);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('agrees on graphs with tied prizes', () => {
    fc.assert(
      fc.property(
        arbitraryGraph({ maxNodes: 10, maxEdges: 16, tiedPrizes: true }),
        fc.integer({ min: 1, max: 6 }),
        (graph, k) => {
          const fast = proposeFixedK(graph, { k });
          const naive = naiveProposal(graph, k, PROPOSAL);
          expect(fast.swaps.map((s) => ({ out: s.out, in: s.in }))).toEqual(naive.swaps);
          expect(fast.selected.map((n) => n.id)).toEqual(naive.selected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('differential: exact refinement vs enumeration of every subset, tie rules included', () => {
  const check = (graph: {
    nodes: import('../../src/core/index.ts').CandidateNode[];
    edges: import('../../src/core/index.ts').CandidateEdge[];
  }) => {
    const expected = bruteRefine(graph.nodes, graph.edges, REFINE);
    expect(refineExact(graph.nodes, graph.edges, REFINE).selected.map((n) => n.id)).toEqual(expected);
    expect(refineExact(graph.nodes, graph.edges, REFINE, 'enumerate').selected.map((n) => n.id)).toEqual(
      expected,
    );
  };

  it('sparse graphs, continuous prizes (K <= 10)', () => {
    fc.assert(fc.property(arbitraryGraph({ maxNodes: 10, maxEdges: 14 }), check), { numRuns: 300 });
  });

  it('tied prizes (K <= 10)', () => {
    fc.assert(fc.property(arbitraryGraph({ maxNodes: 10, maxEdges: 14, tiedPrizes: true }), check), {
      numRuns: 300,
    });
  });

  it('low prizes around kappa, many cycles (K <= 12)', () => {
    fc.assert(fc.property(arbitraryGraph({ maxNodes: 12, maxEdges: 30, lowPrizes: true }), check), {
      numRuns: 150,
    });
  });

  it('low prizes, sparse cycles (K <= 12)', () => {
    fc.assert(fc.property(arbitraryGraph({ maxNodes: 12, maxEdges: 15, lowPrizes: true }), check), {
      numRuns: 200,
    });
  });

  it('dense cyclic components (K <= 12)', () => {
    fc.assert(fc.property(arbitraryDenseGraph(12), check), { numRuns: 120 });
  });

  it('dense cyclic components with exact ties (K <= 12)', () => {
    fc.assert(fc.property(arbitraryDenseGraph(12, 2, true), check), { numRuns: 200 });
  });

  it('components equal enumeration at K = 18 on dense graphs with prizes around kappa', () => {
    fc.assert(
      fc.property(arbitraryDenseGraph(18, 18), (graph) => {
        const fast = refineExact(graph.nodes, graph.edges, REFINE);
        const full = refineExact(graph.nodes, graph.edges, REFINE, 'enumerate');
        expect(fast.selected.map((n) => n.id)).toEqual(full.selected.map((n) => n.id));
        expect(fast.objective).toBeCloseTo(full.objective, 10);
      }),
      { numRuns: 3 },
    );
  });

  it('dense cyclic components at K = 14', () => {
    fc.assert(fc.property(arbitraryDenseGraph(14, 13), check), { numRuns: 12 });
  });
});
