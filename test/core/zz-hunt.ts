import fc from 'fast-check';
import { refineExact } from '../../src/core/index.ts';
import { arbitraryDenseGraph, bruteRefine } from './forest-fixtures.ts';
const REFINE = { kappa: 0.12, lambda: 0.1 };
const t0 = Date.now();
let runs = 0;
while (Date.now() - t0 < 240000) {
  const r = fc.check(fc.property(arbitraryDenseGraph(12), (graph) => {
    const expected = bruteRefine(graph.nodes, graph.edges, REFINE).join(',');
    const a = refineExact(graph.nodes, graph.edges, REFINE).selected.map((n) => n.id).join(',');
    const b = refineExact(graph.nodes, graph.edges, REFINE, 'enumerate').selected.map((n) => n.id).join(',');
    return a === expected && b === expected;
  }), { numRuns: 500 });
  runs += 500;
  if (r.failed) { console.log(JSON.stringify(r.counterexample), r.seed, r.path); break; }
}
console.log('runs', runs);
