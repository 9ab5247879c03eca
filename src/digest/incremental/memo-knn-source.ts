import type { SemanticDoc, SemanticPosting, SemanticTermBound } from '../../store/semantic-index-spec.ts';
import type { KnnSource } from './exact-top-k-search.ts';

/**
 * A KnnSource that reads each term bound, posting window and document once: the forward searches of one
 * batch of newcomers run against an index that does not change until the batch is written, and they share
 * most of their reads (common terms, the heaviest postings, the same neighbourhoods). `docs` also serves
 * the reverse step (the lists of pool members) without reading them again.
 */
export interface MemoKnnSource extends KnnSource {
  /** Whole documents (vector and list) by id, read through the cache. */
  docs(ids: readonly string[]): Promise<Map<string, SemanticDoc>>;
}

export function memoKnnSource(read: {
  termBounds: KnnSource['termBounds'];
  postings: KnnSource['postings'];
  /** Passed through (memoised with `postings`' top reads) when the source has it. */
  topPostings?: KnnSource['topPostings'];
  getDocs(ids: readonly string[]): Promise<SemanticDoc[]>;
}): MemoKnnSource {
  // Keyed by whether maxRatio was asked for (without it, a backend may give Infinity).
  const bounds = [new Map<string, SemanticTermBound | null>(), new Map<string, SemanticTermBound | null>()];
  const postings = new Map<string, Promise<readonly SemanticPosting[]>>();
  const docs = new Map<string, SemanticDoc | null>();
  const readDocs = async (ids: readonly string[]): Promise<Map<string, SemanticDoc>> => {
    const missing = [...new Set(ids)].filter((id) => !docs.has(id));
    if (missing.length > 0) {
      for (const id of missing) docs.set(id, null);
      for (const doc of await read.getDocs(missing)) docs.set(doc.memoryId, doc);
    }
    const out = new Map<string, SemanticDoc>();
    for (const id of ids) {
      const doc = docs.get(id);
      if (doc) out.set(id, doc);
    }
    return out;
  };
  const topKey = (term: string, n: number) => `${term}\u0000${JSON.stringify({ top: n })}`;
  const topPostings = read.topPostings;
  return {
    ...(topPostings === undefined
      ? {}
      : {
          // The same cache entries as postings(term, { top: n }): one read per term whichever asks.
          async topPostings(terms: readonly string[], n: number) {
            const missing = [...new Set(terms)].filter((term) => !postings.has(topKey(term, n)));
            if (missing.length > 0) {
              const fresh = topPostings(missing, n);
              for (const term of missing) {
                postings.set(
                  topKey(term, n),
                  fresh.then((rows) => rows.get(term) ?? []),
                );
              }
            }
            const rows = await Promise.all(terms.map((term) => postings.get(topKey(term, n))!));
            return new Map(terms.map((term, at) => [term, rows[at]!]));
          },
        }),
    async termBounds(terms, options) {
      const known = bounds[options?.ratio ? 1 : 0]!;
      const missing = terms.filter((term) => !known.has(term));
      if (missing.length > 0) {
        const fresh = await read.termBounds(missing, options);
        for (const term of missing) known.set(term, fresh.get(term) ?? null);
      }
      const out = new Map<string, SemanticTermBound>();
      for (const term of terms) {
        const bound = known.get(term);
        if (bound) out.set(term, bound);
      }
      return out;
    },
    postings(term, filter) {
      // The filter's own fields are the key: the same window of the same term is the same rows.
      const key = `${term}\u0000${JSON.stringify(filter)}`;
      let rows = postings.get(key);
      if (!rows) {
        rows = read.postings(term, filter);
        postings.set(key, rows);
      }
      return rows;
    },
    vectors: readDocs,
    docs: readDocs,
  };
}
