import type {
  SemanticDoc,
  SemanticNeighbour,
  SemanticPosting,
  SemanticTermBound,
  SemanticVector,
} from '../../store/semantic-index-spec.ts';
import type { KnnSource } from './exact-top-k-search.ts';
import type { SparseDoc } from './frozen-tfidf.ts';

/**
 * A KnnSource that reads each term bound, posting window, vector and list once: the forward searches of one
 * batch of newcomers run against an index that does not change until the batch is written, and they share
 * most of their reads (common terms, the heaviest postings, the same neighbourhoods). `lists` serves the
 * reverse step (the lists of pool members); with `getVectors` candidates are read without their lists, and
 * `entryBound` says which lists a newcomer's score cannot enter, so those are never read.
 */
export interface MemoKnnSource extends KnnSource {
  /** Stored lists by id (documents without one map to []), read through the cache. */
  lists(ids: readonly string[]): Promise<Map<string, readonly SemanticNeighbour[]>>;
  /**
   * The entry bound (listThreshold) of a stored list whose vector was read, when the source gives it: a
   * score below it cannot enter the list. Undefined otherwise (read the list to decide).
   */
  entryBound(id: string): number | undefined;
}

export function memoKnnSource(read: {
  termBounds: KnnSource['termBounds'];
  postings: KnnSource['postings'];
  /** Passed through (memoised with `postings`' top reads) when the source has it. */
  topPostings?: KnnSource['topPostings'];
  getDocs(ids: readonly string[]): Promise<SemanticDoc[]>;
  /** Vectors without lists (SemanticIndexStore.getVectors), when the source has it. */
  getVectors?: ((ids: readonly string[]) => Promise<SemanticVector[]>) | undefined;
  /**
   * Terms whose first weight window reads their whole list instead (later windows then read nothing): the
   * short lists of rare terms, which the forward search's first cutoff already reads to the end nearly
   * always, and whose deeper windows were each one more statement that found nothing (~5 per newcomer).
   */
  wholeList?: ((term: string) => boolean) | undefined;
}): MemoKnnSource {
  // Keyed by whether maxRatio was asked for (without it, a backend may give Infinity).
  const bounds = [new Map<string, SemanticTermBound | null>(), new Map<string, SemanticTermBound | null>()];
  const postings = new Map<string, Promise<readonly SemanticPosting[]>>();
  const docs = new Map<string, SemanticDoc | null>();
  const vectors = new Map<string, SemanticVector | null>();
  const prefixes = new PostingPrefixes(
    (term, minWeight, below) =>
      read.postings(term, below === undefined ? { minWeight } : { minWeight, below }),
    read.wholeList ?? (() => false),
  );
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
  const getVectors = read.getVectors;
  const readVectors = async (ids: readonly string[]): Promise<Map<string, SparseDoc>> => {
    if (!getVectors) return readDocs(ids);
    const missing = [...new Set(ids)].filter((id) => !vectors.has(id));
    if (missing.length > 0) {
      for (const id of missing) vectors.set(id, null);
      for (const vector of await getVectors(missing)) vectors.set(vector.memoryId, vector);
    }
    const out = new Map<string, SparseDoc>();
    for (const id of ids) {
      const vector = vectors.get(id);
      if (vector) out.set(id, vector);
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
      if ('minWeight' in filter) return prefixes.read(term, filter.minWeight, filter.below);
      // The filter's own fields are the key: the same window of the same term is the same rows.
      const memo = () => {
        const key = `${term}\u0000${JSON.stringify(filter)}`;
        let rows = postings.get(key);
        if (!rows) {
          rows = read.postings(term, filter);
          postings.set(key, rows);
        }
        return rows;
      };
      return 'top' in filter ? prefixes.top(term, filter.top, memo) : memo();
    },
    vectors: readVectors,
    // Whole documents (few: the lists a newcomer's score may enter); getLists stays the edge sync's read.
    async lists(ids) {
      const found = await readDocs(ids);
      return new Map(ids.map((id) => [id, found.get(id)?.neighbours ?? []]));
    },
    entryBound: (id) => vectors.get(id)?.threshold,
  };
}

/**
 * Each term's postings read so far by weight windows, as one prefix of its list (weight desc, then id as the
 * store orders them): every posting with weight >= `floor` is in `rows`. The newcomers of a chunk each read
 * their own windows of the same terms (cutoffs differ per search); a window inside the prefix is a slice
 * of it, and a deeper one reads only what lies between its cutoff and the floor. So a chunk reads each
 * posting at most once, and every answer equals the store's own for that window.
 */
class PostingPrefixes {
  private readonly terms = new Map<string, Promise<{ rows: SemanticPosting[]; floor: number }>>();

  constructor(
    private readonly load: (
      term: string,
      minWeight: number,
      below: number | undefined,
    ) => Promise<readonly SemanticPosting[]>,
    private readonly wholeList: (term: string) => boolean,
  ) {}

  /** `postings(term, { minWeight, below })`. */
  read(term: string, minWeight: number, below: number | undefined): Promise<readonly SemanticPosting[]> {
    const previous = this.terms.get(term);
    // Chained per term: a deeper read extends the prefix the earlier one left.
    const next = (async () => {
      const prefix = previous ? await previous : undefined;
      if (prefix && minWeight >= prefix.floor) return prefix;
      if (!prefix) {
        // Weights are positive: a read from 0 holds the whole list, and every later window is a slice.
        const floor = this.wholeList(term) ? Math.min(0, minWeight) : minWeight;
        return { rows: [...(await this.load(term, floor, undefined))], floor };
      }
      const deeper = await this.load(term, minWeight, prefix.floor);
      return { rows: [...prefix.rows, ...deeper], floor: minWeight };
    })();
    this.terms.set(term, next);
    return next.then(({ rows }) => window(rows, minWeight, below ?? Number.POSITIVE_INFINITY));
  }

  /** `postings(term, { top: n })`: the first n of the prefix when it holds n (it is the same order). */
  async top(
    term: string,
    n: number,
    otherwise: () => Promise<readonly SemanticPosting[]>,
  ): Promise<readonly SemanticPosting[]> {
    const prefix = this.terms.get(term);
    const rows = prefix ? (await prefix).rows : undefined;
    return rows && rows.length >= n ? rows.slice(0, Math.max(0, n)) : otherwise();
  }
}

/** The postings of `rows` (weight desc) with minWeight <= weight < below, in order. */
function window(rows: readonly SemanticPosting[], minWeight: number, below: number): SemanticPosting[] {
  return rows.slice(firstBelow(rows, below), firstBelow(rows, minWeight));
}

/** Index of the first posting whose weight is < `value` (rows are weight desc). */
function firstBelow(rows: readonly SemanticPosting[], value: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.weight >= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
