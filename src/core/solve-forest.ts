import type { CandidateGraph, ForestSolution, SolverParams } from './candidate-graph.ts';
import { compareNodeRank, indexGraph } from './indexed-graph.ts';
import { proposeOnIndexed } from './propose-fixed-k.ts';
import { refineExact } from './refine-exact.ts';
import { serializeForest } from './serialize-forest.ts';
import { resolveSolverParams } from './solver-params.ts';

/**
 * The full evidence-forest solver (paper 3.5): fixed-K 1-swap proposal at kappaProposal, exact refinement
 * inside it at kappa, breadth-first serialization, and a trace that replays every decision.
 * Pure and deterministic: the same graph (in any node/edge order) and params give the same solution.
 * An empty candidate set gives an empty solution; otherwise at least one memory is always returned.
 */
export function solveForest(graph: CandidateGraph, params: Partial<SolverParams> = {}): ForestSolution {
  const resolved = resolveSolverParams(params);
  const ranked = indexGraph([...graph.nodes].sort(compareNodeRank), graph.edges);
  const proposal = proposeOnIndexed(ranked, resolved.k, {
    kappa: resolved.kappaProposal,
    lambda: resolved.lambda,
  });
  const refinement = refineExact(proposal.selected, ranked.edges, {
    kappa: resolved.kappa,
    lambda: resolved.lambda,
  });
  const serialized = serializeForest(refinement.selected, refinement.edges);
  return {
    order: serialized.order,
    trees: serialized.trees,
    edges: refinement.edges,
    objective: refinement.objective,
    trace: {
      initial: proposal.initial.map((node) => node.id),
      initialObjective: proposal.initialObjective,
      swaps: proposal.swaps,
      proposal: proposal.selected.map((node) => node.id),
      proposalObjective: proposal.objective,
      proposalEdges: proposal.edges,
      dropped: refinement.dropped.map((node) => node.id),
      finalObjective: refinement.objective,
      refineMethod: refinement.method,
      params: resolved,
    },
  };
}
