import { byPrize, greedySelect, type Selector } from './frozen-pool.ts';

/**
 * The generic diversity / coverage baselines of paper A.6, with its fixed parameters:
 * beta_MMR = 0.05, (gamma, sigma)_DPP = (8, 0.5), beta_facility = 0.25. None of them uses ECV relations.
 */
export const SIMILARITY_SELECTOR_PARAMS = {
  mmrBeta: 0.05,
  dppGamma: 8,
  dppSigma: 0.5,
  facilityBeta: 0.25,
} as const;

/** Top-K by node prize. */
export const nodeTopK: Selector = (pool, k) =>
  [...pool.candidates]
    .sort(byPrize)
    .slice(0, k)
    .map((c) => c.id);

/** MMR: prize minus beta times the maximum similarity to anything already selected. */
export function mmr(beta: number = SIMILARITY_SELECTOR_PARAMS.mmrBeta): Selector {
  return (pool, k) =>
    greedySelect(pool, k, (candidate, selected) => {
      let maxSim = 0;
      for (const other of selected) maxSim = Math.max(maxSim, pool.similarity(candidate.id, other.id));
      return candidate.prize - beta * maxSim;
    });
}

/**
 * Facility location: sum of prizes plus beta times how well the selection covers the whole pool,
 * F(S) = sum_{i in S} p_i + beta * sum_{j in C} max_{i in S} max(0, sim(i, j)); greedy on marginal gain.
 */
export function facilityLocation(beta: number = SIMILARITY_SELECTOR_PARAMS.facilityBeta): Selector {
  return (pool, k) => {
    // cover[j] = max similarity of candidate j to anything selected so far.
    const cover = new Map<string, number>(pool.candidates.map((c) => [c.id, 0]));
    const coverageGain = (id: string): number => {
      let total = 0;
      for (const j of pool.candidates)
        total += Math.max(0, Math.max(0, pool.similarity(id, j.id)) - (cover.get(j.id) ?? 0));
      return total;
    };
    return greedySelect(
      pool,
      k,
      (candidate) => candidate.prize + beta * coverageGain(candidate.id),
      (picked) => {
        for (const j of pool.candidates) {
          const sim = pool.similarity(picked.id, j.id);
          if (sim > (cover.get(j.id) ?? 0)) cover.set(j.id, sim);
        }
      },
    );
  };
}

/**
 * DPP with a quality-weighted RBF kernel L_ij = q_i * q_j * exp(-||x_i - x_j||^2 / (2 sigma^2)),
 * q_i = exp(gamma * p_i / 2), unit vectors so ||x_i - x_j||^2 = 2 - 2 cos. Greedy MAP: each step adds the item
 * with the largest increase of log det(L_S), computed incrementally by Cholesky updates.
 */
export function dpp(
  gamma: number = SIMILARITY_SELECTOR_PARAMS.dppGamma,
  sigma: number = SIMILARITY_SELECTOR_PARAMS.dppSigma,
): Selector {
  return (pool, k) => {
    const items = [...pool.candidates].sort(byPrize);
    const n = items.length;
    const quality = items.map((c) => Math.exp((gamma * c.prize) / 2));
    const kernel = (i: number, j: number): number => {
      if (i === j) return quality[i]! * quality[i]!;
      const cos = pool.similarity(items[i]!.id, items[j]!.id);
      return quality[i]! * quality[j]! * Math.exp(-(2 - 2 * cos) / (2 * sigma * sigma));
    };
    // Fast greedy MAP (Chen et al. 2018): d2[i] is the residual variance of item i given the selection.
    const d2 = items.map((_, i) => kernel(i, i));
    const rows: number[][] = items.map(() => []);
    const selected: number[] = [];
    const taken = new Set<number>();
    while (selected.length < Math.min(k, n)) {
      let best = -1;
      for (let i = 0; i < n; i++) {
        if (taken.has(i)) continue;
        if (best < 0 || d2[i]! > d2[best]! + 1e-12) best = i;
      }
      if (best < 0 || d2[best]! <= 1e-12) {
        // The kernel is numerically exhausted: fill the rest by prize so the selector still returns K.
        for (let i = 0; i < n && selected.length < Math.min(k, n); i++) {
          if (!taken.has(i)) {
            taken.add(i);
            selected.push(i);
          }
        }
        break;
      }
      const dBest = Math.sqrt(d2[best]!);
      for (let i = 0; i < n; i++) {
        if (taken.has(i) || i === best) continue;
        const dot = rows[best]!.reduce((sum, value, t) => sum + value * rows[i]![t]!, 0);
        const e = (kernel(best, i) - dot) / dBest;
        rows[i]!.push(e);
        d2[i] = d2[i]! - e * e;
      }
      taken.add(best);
      selected.push(best);
    }
    return selected.map((i) => items[i]!.id);
  };
}
