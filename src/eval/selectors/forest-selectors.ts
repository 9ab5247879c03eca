import type { CandidateGraph, CandidateNode, SolverParams } from '../../core/candidate-graph.ts';
import { nodeSetObjective, proposeFixedK, resolveSolverParams, solveForest } from '../../core/index.ts';
import { byPrize, type FrozenPool, type Selector } from './frozen-pool.ts';

/** The forest objective used by the structured baselines, at the proposal's kappa (fixed-K comparison). */
function graphOf(pool: FrozenPool): CandidateGraph {
  return {
    nodes: pool.candidates.map((c) => ({ id: c.id, position: c.position, prize: c.prize })),
    edges: pool.edges,
  };
}

/**
 * Greedy forest: the proposed forest objective (kappa_proposal) with forward greedy marginal gain instead of
 * the 1-swap search; fixed K like the proposal, so it isolates the search from the objective.
 */
export function greedyForest(params: Partial<Omit<SolverParams, 'k'>> = {}): Selector {
  return (pool, k) => {
    const resolved = resolveSolverParams(params);
    const gain = { kappa: resolved.kappaProposal, lambda: resolved.lambda };
    const graph = graphOf(pool);
    const order = [...pool.candidates].sort(byPrize).map((c) => c.id);
    const byId = new Map(graph.nodes.map((node) => [node.id, node]));
    const remaining: CandidateNode[] = order.map((id) => byId.get(id)!);
    const selected: CandidateNode[] = [];
    while (selected.length < k && remaining.length > 0) {
      let bestIndex = 0;
      let bestValue = Number.NEGATIVE_INFINITY;
      remaining.forEach((node, index) => {
        const value = nodeSetObjective([...selected, node], graph.edges, gain);
        if (value > bestValue + 1e-12) {
          bestValue = value;
          bestIndex = index;
        }
      });
      const [picked] = remaining.splice(bestIndex, 1);
      if (!picked) break;
      selected.push(picked);
    }
    return selected.map((node) => node.id);
  };
}

/** The fixed-K 1-swap forest proposal (paper A.6 row "Forest Proposal"). */
export function forestProposal(params: Partial<Omit<SolverParams, 'k'>> = {}): Selector {
  return (pool, k) => proposeFixedK(graphOf(pool), { ...params, k }).selected.map((node) => node.id);
}

/**
 * The complete GraphMemix selector: proposal plus exact variable-size refinement, in reading order, at the
 * refinement kappa the pipeline used for this pool (a fitted ranker's) unless `params` names one.
 */
export function graphmemixForest(params: Partial<Omit<SolverParams, 'k'>> = {}): Selector {
  return (pool, k) => {
    const kappa = params.kappa ?? pool.refinementKappa;
    return solveForest(graphOf(pool), { ...params, ...(kappa === undefined ? {} : { kappa }), k }).order;
  };
}
