import { byPrize, type Selector } from './frozen-pool.ts';

/** eta_pointwise of paper A.6. */
export const ECV_POINTWISE_ETA = 0.4;

/**
 * ECV pointwise: each candidate gets its strongest kept ECV edge weight as an independent bonus,
 * score = p_i + eta * max_e w_e (0 without an edge), then top-K. The bonus goes to the verified candidate
 * (edge.b), not to the anchor it was verified against. Uses relations, but not jointly.
 */
export function ecvPointwise(eta: number = ECV_POINTWISE_ETA): Selector {
  return (pool, k) => {
    const bonus = new Map<string, number>();
    for (const edge of pool.edges) {
      bonus.set(edge.b, Math.max(bonus.get(edge.b) ?? 0, edge.weight));
    }
    return pool.candidates
      .map((candidate) => ({ candidate, score: candidate.prize + eta * (bonus.get(candidate.id) ?? 0) }))
      .sort((x, y) => (y.score !== x.score ? y.score - x.score : byPrize(x.candidate, y.candidate)))
      .slice(0, k)
      .map(({ candidate }) => candidate.id);
  };
}
