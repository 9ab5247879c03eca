/**
 * Solver benchmark: `npm run bench:solver` prints a table; `npm run bench:solver -- --json` prints exactly
 * one JSON object {"cases":[...]}. Synthetic instances from a seeded PRNG (the core itself has no
 * randomness): "question" instances shaped like real ones (M = 48, prizes = sigmoid of retrieval and
 * verifier scores with the method notes' calibration, 0..12 verified anchor-candidate edges) and stress
 * instances (200 edges, M up to 384, K up to 24), plus "dense" refinement instances (M = K, every pair
 * joined with probability 0.3, prizes 0..0.15 around kappa: the exact refinement's hard case).
 * Each instance is solved 3 times and its fastest run kept, so the percentiles describe the solver rather
 * than scheduler noise on a shared machine.
 */

import {
  type CandidateEdge,
  type CandidateGraph,
  type CandidateNode,
  ecvEdgeWeight,
  edgeCostFromWeight,
  proposeFixedK,
  refineExact,
  solveForest,
} from '../src/core/index.ts';
import { mulberry32 } from '../src/digest/semantic/seeded-random.ts';
import { checkBenchFlags } from './support/probe-args.ts';

checkBenchFlags('npm run bench:solver [-- --json]', ['--json']);

interface BenchCase {
  kind: 'question' | 'stress' | 'dense';
  m: number;
  k: number;
  /** Edges per instance: a fixed count, or 'up to' for question instances (uniform 0..edges). */
  edges: number;
  instances: number;
}

interface CaseResult {
  kind: string;
  m: number;
  k: number;
  edges: number;
  instances: number;
  mean_edges: number;
  proposal_p50_us: number;
  refine_p50_us: number;
  total_p50_us: number;
  total_p95_us: number;
  total_p99_us: number;
  total_max_us: number;
  mean_swaps: number;
  mean_dropped: number;
}

const ANCHORS = 10;
const CASES: BenchCase[] = [
  { kind: 'question', m: 48, k: 10, edges: 12, instances: 2000 },
  { kind: 'question', m: 48, k: 16, edges: 12, instances: 500 },
  { kind: 'question', m: 48, k: 20, edges: 12, instances: 300 },
  { kind: 'question', m: 48, k: 24, edges: 12, instances: 300 },
  ...[48, 96, 192, 384].flatMap((m) =>
    [10, 16, 20, 24].map(
      (k): BenchCase => ({ kind: 'stress', m, k, edges: 200, instances: m >= 192 ? 40 : 80 }),
    ),
  ),
  ...[10, 16, 20, 24].map((k): BenchCase => ({ kind: 'dense', m: k, k, edges: 0, instances: 100 })),
];
const RUNS_PER_INSTANCE = 3;

function main(): void {
  const json = process.argv.includes('--json');
  const results = CASES.map((c, i) => runCase(c, 0x5eed + i));
  if (json) {
    process.stdout.write(`${JSON.stringify({ cases: results })}\n`);
    return;
  }
  const header = [
    'kind',
    'M',
    'K',
    'E',
    'n',
    'prop p50',
    'refine p50',
    'total p50',
    'p95',
    'p99',
    'max',
    'swaps',
    'dropped',
  ];
  const rows = results.map((r) => [
    r.kind,
    String(r.m),
    String(r.k),
    r.kind === 'question'
      ? `0..${r.edges}`
      : r.kind === 'dense'
        ? `~${r.mean_edges.toFixed(0)}`
        : String(r.edges),
    String(r.instances),
    us(r.proposal_p50_us),
    us(r.refine_p50_us),
    us(r.total_p50_us),
    us(r.total_p95_us),
    us(r.total_p99_us),
    us(r.total_max_us),
    r.mean_swaps.toFixed(1),
    r.mean_dropped.toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i]!)).join('  ');
  console.log(
    `per-solve times (best of ${RUNS_PER_INSTANCE} runs per instance), single thread, seeded synthetic instances`,
  );
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

function runCase(c: BenchCase, seed: number): CaseResult {
  const random = mulberry32(seed);
  const graphs = Array.from({ length: c.instances }, () => makeGraph(c, random));
  // Warm up the JIT on a few instances so the first timings are not compile time.
  for (const graph of graphs.slice(0, 20)) solveForest(graph, { k: c.k });
  const proposal: number[] = [];
  const refine: number[] = [];
  const total: number[] = [];
  let swaps = 0;
  let dropped = 0;
  const meanEdges = graphs.reduce((sum, g) => sum + g.edges.length, 0) / graphs.length;
  for (const graph of graphs) {
    let best = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (let run = 0; run < RUNS_PER_INSTANCE; run++) {
      const t0 = performance.now();
      const proposed = proposeFixedK(graph, { k: c.k });
      const t1 = performance.now();
      refineExact(proposed.selected, graph.edges, { kappa: 0.12, lambda: 0.1 });
      const t2 = performance.now();
      const solution = solveForest(graph, { k: c.k });
      const t3 = performance.now();
      best = [Math.min(best[0]!, t1 - t0), Math.min(best[1]!, t2 - t1), Math.min(best[2]!, t3 - t2)];
      if (run === 0) {
        swaps += solution.trace.swaps.length;
        dropped += solution.trace.dropped.length;
      }
    }
    proposal.push(best[0]! * 1000);
    refine.push(best[1]! * 1000);
    total.push(best[2]! * 1000);
  }
  return {
    kind: c.kind,
    m: c.m,
    k: c.k,
    edges: c.kind === 'dense' ? Math.round(meanEdges) : c.edges,
    instances: c.instances,
    mean_edges: meanEdges,
    proposal_p50_us: percentile(proposal, 0.5),
    refine_p50_us: percentile(refine, 0.5),
    total_p50_us: percentile(total, 0.5),
    total_p95_us: percentile(total, 0.95),
    total_p99_us: percentile(total, 0.99),
    total_max_us: percentile(total, 1),
    mean_swaps: swaps / c.instances,
    mean_dropped: dropped / c.instances,
  };
}

/** Retrieval scores descending (the pool order), verifier scores mostly 0, calibrated sigmoid prizes. */
function makeGraph(c: BenchCase, random: () => number): CandidateGraph {
  if (c.kind === 'dense') return makeDenseGraph(c.m, random);
  const scores = Array.from({ length: c.m }, () => 0.1 + 0.5 * random()).sort((a, b) => b - a);
  const nodes: CandidateNode[] = scores.map((s, i) => {
    const v = random() < 0.35 ? Math.floor(random() * 6) : 0;
    return { id: `mem-${i}`, position: i, prize: sigmoid(4.054056 * s + 0.22538 * v - 3.711336) };
  });
  const edgeCount = c.kind === 'question' ? Math.floor(random() * (c.edges + 1)) : c.edges;
  const edges: CandidateEdge[] = [];
  for (let e = 0; e < edgeCount; e++) {
    const anchor = Math.floor(random() * Math.min(ANCHORS, c.m));
    let other = Math.floor(random() * c.m);
    if (other === anchor) other = (other + 1) % c.m;
    edges.push(ecvEdge(anchor, other, 1 + Math.floor(random() * 5)));
  }
  return { nodes, edges };
}

function makeDenseGraph(m: number, random: () => number): CandidateGraph {
  const nodes: CandidateNode[] = Array.from({ length: m }, (_, i) => ({
    id: `mem-${i}`,
    position: i,
    prize: 0.15 * random(),
  }));
  const edges: CandidateEdge[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      if (random() < 0.3) edges.push(ecvEdge(i, j, 1 + Math.floor(random() * 5)));
    }
  }
  return { nodes, edges };
}

function ecvEdge(a: number, b: number, sInc: number): CandidateEdge {
  const weight = ecvEdgeWeight(sInc);
  return {
    a: `mem-${a}`,
    b: `mem-${b}`,
    weight,
    cost: edgeCostFromWeight(weight),
    relationTypes: ['consecutive_turn'],
    role: 'new_fact',
    incrementalSupport: sInc,
  };
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return Math.round(sorted[index]! * 10) / 10;
}

function us(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)}ms` : `${value.toFixed(0)}us`;
}

main();
