import type { TfidfSpace } from '../digest/semantic/tfidf-space.ts';
import { sparseDot } from '../digest/semantic/tfidf-space.ts';
import type { RetrievalResult } from '../pipeline/retrieval-result.ts';
import type { FrozenPool } from './selectors/frozen-pool.ts';

/**
 * Freezes one question's pipeline result into the pool every selector sees: the same M candidates, the
 * calibrated prizes, the kept ECV edges, and pairwise similarity from the context's offline TF-IDF space
 * (cosine of L2-normalised vectors; 0 for a memory missing from the space).
 */
export function frozenPoolFromResult(
  result: RetrievalResult,
  space: TfidfSpace,
  indexOf: Map<string, number>,
): FrozenPool {
  const cache = new Map<string, number>();
  return {
    candidates: result.pool.map((c) => ({
      id: c.memoryId,
      position: c.position,
      prize: c.prize,
      retrievalScore: c.retrievalScore,
      verifierScore: c.verifierScore,
    })),
    edges: result.verifiedEdges.filter((edge) => edge.kept),
    ...(result.forest.trace.params === undefined
      ? {}
      : { refinementKappa: result.forest.trace.params.kappa }),
    similarity: (a, b) => {
      if (a === b) return 1;
      const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
      let value = cache.get(key);
      if (value === undefined) {
        const ia = indexOf.get(a);
        const ib = indexOf.get(b);
        value = ia === undefined || ib === undefined ? 0 : sparseDot(space.vector(ia), space.vector(ib));
        cache.set(key, value);
      }
      return value;
    },
  };
}
