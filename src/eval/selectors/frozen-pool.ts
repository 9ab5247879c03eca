import type { CandidateEdge } from '../../core/candidate-graph.ts';

/**
 * One question's frozen candidate pool (paper A.6): the same M candidates, calibrated prizes, similarities and
 * ECV edges for every selector, so a comparison changes only the selection rule.
 */
export interface FrozenCandidate {
  id: string;
  position: number;
  prize: number;
  retrievalScore: number;
  verifierScore: number;
}

export interface FrozenPool {
  candidates: FrozenCandidate[];
  /** Kept (trusted) ECV edges. */
  edges: CandidateEdge[];
  /** Cosine similarity of two candidates' canonical representations (dense embeddings or TF-IDF), in [-1, 1]. */
  similarity: (a: string, b: string) => number;
  /** The refinement kappa the pipeline solved this question with (a fitted ranker's); absent: the default. */
  refinementKappa?: number;
}

/** A selector returns memory ids in its own order; fixed-K selectors return min(K, M) of them. */
export type Selector = (pool: FrozenPool, k: number) => string[];

/** Deterministic order used by every selector for ties: prize desc, then pool position, then id. */
export function byPrize(a: FrozenCandidate, b: FrozenCandidate): number {
  if (b.prize !== a.prize) return b.prize - a.prize;
  if (a.position !== b.position) return a.position - b.position;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Generic forward greedy: at each step pick the remaining candidate with the largest marginal gain; ties go
 * to the earlier candidate in prize order. Shared by MMR, facility location and DPP.
 */
export function greedySelect(
  pool: FrozenPool,
  k: number,
  gain: (candidate: FrozenCandidate, selected: readonly FrozenCandidate[]) => number,
  onPick?: (picked: FrozenCandidate) => void,
): string[] {
  const remaining = [...pool.candidates].sort(byPrize);
  const selected: FrozenCandidate[] = [];
  while (selected.length < k && remaining.length > 0) {
    let bestIndex = 0;
    let bestGain = Number.NEGATIVE_INFINITY;
    remaining.forEach((candidate, index) => {
      const value = gain(candidate, selected);
      if (value > bestGain + 1e-12) {
        bestGain = value;
        bestIndex = index;
      }
    });
    const [picked] = remaining.splice(bestIndex, 1);
    if (!picked) break;
    selected.push(picked);
    onPick?.(picked);
  }
  return selected.map((candidate) => candidate.id);
}
