import type { SemanticIndexStore } from '../../store/semantic-index-spec.ts';
import type { KnnSource } from './exact-top-k-search.ts';
import type { SparseDoc } from './frozen-tfidf.ts';

/** The store's semantic port bound to one context, as a KnnSource (reads only; writes go through the port). */
export function storeKnnSource(index: SemanticIndexStore, contextId: string): KnnSource {
  return {
    termBounds: (terms, options) => index.termBounds(contextId, terms, options),
    postings: (term, filter) => index.postings(contextId, term, filter),
    ...(index.topPostings === undefined
      ? {}
      : { topPostings: (terms, n) => index.topPostings!(contextId, terms, n) }),
    async vectors(ids) {
      const out = new Map<string, SparseDoc>();
      // Without the lists where the backend can (a search scores vectors only).
      const docs = index.getVectors
        ? await index.getVectors(contextId, ids)
        : await index.getDocs(contextId, ids);
      for (const doc of docs) out.set(doc.memoryId, doc);
      return out;
    },
  };
}
