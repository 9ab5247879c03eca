import { sharedArray } from '../semantic/shared-array.ts';
import type { KnnSpace } from '../semantic/tfidf-space.ts';
import { rankableScore, TopKLists } from '../semantic/top-k-lists.ts';

/** Bounds of boundedKnnLists (docs/semantic-knn.md, "Bulk imports of large contexts"). */
export interface BoundedKnnTuning {
  /** Postings read per term: its heaviest (weight desc, then document asc). Default 1,024. */
  maxPostingsPerTerm?: number;
  /** Candidates scored exactly per document: the best by partial score. Default 4k (32 for k = 8). */
  rescore?: number;
  /**
   * A document skips a cut term's postings when the most that term can add to any partial score (its weight in
   * the document times the term's heaviest kept weight) is under this share of the most any of its terms can
   * add. 0 reads every term. Default BOUNDED_KNN_DEFAULTS.pruneRatio.
   */
  pruneRatio?: number;
}

/**
 * The incremental add's posting limit (MAX_POSTINGS_PER_TERM) and its pool (REVERSE_POOL_FACTOR * k); the share
 * under which a document skips a cut term (fitted on bench:scale's generated text, not on dev data, against
 * the exact lists of 2,000 sampled documents at 1M: 0.4 kept list recall 0.975 -> 0.973 for 18-24% less CPU;
 * docs/semantic-knn.md "Skipping a document's weak cut terms").
 */
export const BOUNDED_KNN_DEFAULTS = { maxPostingsPerTerm: 1024, rescoreFactor: 4, pruneRatio: 0.4 } as const;

/**
 * Approximate top-k lists of every document of a space with bounded reads per document (so at most linear
 * once a document's terms pass the cut): the all-pairs pass of bulk imports into large contexts, where the
 * exact one (exactKnnLists) grows like n^1.5-2.4 on chat text (docs/semantic-knn.md; measured 10.0 / 64.4 s
 * CPU at 100k / 300k against 14.8 / 145 s exact, while more terms reach the cut).
 *
 * The rule of the incremental add's forward search: each term is read through its `maxPostingsPerTerm`
 * heaviest postings only (common words' long lists are cut; a term in fewer documents is read whole). For
 * each document i, the postings of its terms give every document they name a partial dot product
 * (term-at-a-time accumulation, one multiply-add per posting); the `rescore` best by partial score are
 * scored exactly from their full vectors and offered to both lists (i's and theirs). So every listed score
 * is a true cosine, ranked as exactKnnLists ranks (score desc, index asc), and the lists can only miss a
 * neighbour that none of i's cut lists names, or that more than `rescore` documents outrank by partial score
 * (and that did not find i from its own side). Reads per document are at most terms * maxPostingsPerTerm
 * postings and `rescore` exact scores, whatever the context size.
 *
 * A document also skips a cut term whose contribution is bounded under `pruneRatio` of its strongest term's
 * (see BoundedKnnTuning): in a large context those are its common words, whose 1,024 postings were most of its
 * reads and whose partial sums rarely decide the `rescore` candidates (their full scores still count: the
 * candidates are scored from their whole vectors).
 *
 * Complete (equal to exactKnnLists) when no term is in more than `maxPostingsPerTerm` documents and no
 * document shares a term with more than `rescore` others: every document sharing a term is scored (pruning
 * only ever skips a cut term).
 */
export function boundedKnnLists(space: KnnSpace, k: number, tuning: BoundedKnnTuning = {}): TopKLists {
  const lists = new TopKLists(space.size, k);
  boundedKnnSearcher(boundedKnnIndex(space, k, tuning), lists)(0, space.size);
  return lists;
}

/**
 * The postings boundedKnnLists reads over all documents before any term is skipped (pruneRatio 0): each
 * document reads every term's cut list, so the sum over entries of min(df, maxPostingsPerTerm). Known before
 * either pass runs (one walk of the entries): what an exact pass is weighed against (compact-semantic.ts).
 */
export function boundedKnnReads(space: KnnSpace, tuning: BoundedKnnTuning = {}): number {
  const maxPostings = tuning.maxPostingsPerTerm ?? BOUNDED_KNN_DEFAULTS.maxPostingsPerTerm;
  const { docTerm, df } = space;
  let reads = 0;
  for (let e = 0; e < docTerm.length; e++) reads += Math.min(df[docTerm[e]!]!, maxPostings);
  return reads;
}

/** The cut posting lists boundedKnnLists searches (on SharedArrayBuffers, for parallelKnnLists). */
export interface BoundedKnnIndex {
  kind: 'bounded';
  space: KnnSpace;
  rescore: number;
  start: Uint32Array;
  postDoc: Uint32Array;
  postWeight: Float32Array;
  /** Per term: its heaviest kept posting weight (what the term can add to a partial sum, per unit of query). */
  heaviest: Float32Array;
  /** Per term: 1 when its list was cut (df > maxPostingsPerTerm): only those may be skipped. */
  cut: Uint8Array;
  pruneRatio: number;
}

/** Builds the cut posting lists: all of a term in at most maxPostingsPerTerm documents, else its heaviest. */
export function boundedKnnIndex(space: KnnSpace, k: number, tuning: BoundedKnnTuning = {}): BoundedKnnIndex {
  const maxPostings = tuning.maxPostingsPerTerm ?? BOUNDED_KNN_DEFAULTS.maxPostingsPerTerm;
  const pruneRatio = tuning.pruneRatio ?? BOUNDED_KNN_DEFAULTS.pruneRatio;
  if (!(pruneRatio >= 0 && pruneRatio <= 1))
    throw new RangeError(`pruneRatio must be in [0, 1], got ${pruneRatio}`);
  const n = space.size;
  const rescore = Math.max(1, Math.min(tuning.rescore ?? BOUNDED_KNN_DEFAULTS.rescoreFactor * k, n));
  const vocabularySize = space.df.length;
  const { docStart, docTerm, docWeight } = space;

  const keep = cutLongTerms(space, maxPostings);
  const start = sharedArray(Uint32Array, vocabularySize + 1);
  for (let e = 0; e < docTerm.length; e++) if (keep[e]) start[docTerm[e]! + 1]!++;
  for (let t = 0; t < vocabularySize; t++) start[t + 1] = start[t]! + start[t + 1]!;
  const fill = start.slice(0, vocabularySize);
  const postDoc = sharedArray(Uint32Array, start[vocabularySize]!);
  const postWeight = sharedArray(Float32Array, start[vocabularySize]!);
  const heaviest = sharedArray(Float32Array, vocabularySize);
  const cut = sharedArray(Uint8Array, vocabularySize);
  for (let j = 0; j < n; j++) {
    for (let e = docStart[j]!; e < docStart[j + 1]!; e++) {
      if (!keep[e]) continue;
      const t = docTerm[e]!;
      const slot = fill[t]!++;
      postDoc[slot] = j;
      postWeight[slot] = docWeight[e]!;
      if (postWeight[slot]! > heaviest[t]!) heaviest[t] = postWeight[slot]!;
    }
  }
  for (let t = 0; t < vocabularySize; t++) if (space.df[t]! > maxPostings) cut[t] = 1;
  return { kind: 'bounded', space, rescore, start, postDoc, postWeight, heaviest, cut, pruneRatio };
}

/**
 * Which entries of docTerm the index keeps: all of a term's when it is in at most `maxPostings` documents, else
 * its `maxPostings` heaviest (ties by document, i.e. by entry). The long terms' entries are gathered in ONE
 * typed array, term by term (a JS array per term held ~8 bytes an entry plus growth: the largest transient of
 * a 1M import's semantic pass), then each term's run is ordered in place.
 */
function cutLongTerms(space: KnnSpace, maxPostings: number): Uint8Array {
  const { docTerm, docWeight, df } = space;
  const keep = new Uint8Array(docTerm.length).fill(1);
  const vocabularySize = df.length;
  // runStart[t] .. runStart[t + 1] - 1: long term t's entries (empty for a short term). Sized by the entries
  // themselves, not by df (the same in a TfidfSpace; a hand-made space need not keep them equal).
  const runStart = new Uint32Array(vocabularySize + 1);
  for (let e = 0; e < docTerm.length; e++) {
    const t = docTerm[e]!;
    if (df[t]! > maxPostings) runStart[t + 1]!++;
  }
  for (let t = 0; t < vocabularySize; t++) runStart[t + 1] = runStart[t]! + runStart[t + 1]!;
  const total = runStart[vocabularySize]!;
  if (total === 0) return keep;
  const entries = new Uint32Array(total);
  const fill = runStart.slice(0, vocabularySize);
  for (let e = 0; e < docTerm.length; e++) {
    const t = docTerm[e]!;
    if (df[t]! > maxPostings) entries[fill[t]!++] = e;
  }
  const byWeight = (x: number, y: number): number => docWeight[y]! - docWeight[x]! || x - y;
  for (let t = 0; t < vocabularySize; t++) {
    const from = runStart[t]!;
    const to = runStart[t + 1]!;
    if (to === from) continue;
    const run = entries.subarray(from, to).sort(byWeight);
    for (let r = maxPostings; r < run.length; r++) keep[run[r]!] = 0;
  }
  return keep;
}

/**
 * Searches documents [from, to) into `lists`, in any order: a document's candidates depend on the index
 * alone, and a list keeps the k best of what it is offered whatever the order, so lists filled by several
 * threads and merged equal one thread's (parallel-knn-lists.ts).
 */
export function boundedKnnSearcher(
  index: BoundedKnnIndex,
  lists: TopKLists,
): (from: number, to: number) => void {
  const { space, rescore, start, postDoc, postWeight, heaviest, cut, pruneRatio } = index;
  const { docStart, docTerm, docWeight } = space;
  // Partial sums only choose which `rescore` candidates are scored exactly (in doubles, below), so single
  // precision is enough, and half the bytes of a context-sized array read at random per posting: at 1M the
  // pass took 207 -> 145 s on one thread, its lists equal (sha256) at 300k and 1M on bench:scale's text. A
  // near-tie past single precision can change which 32 are rescored: only this approximate pass allows it.
  const partial = new Float32Array(space.size);
  let touched = new Uint32Array(1024);
  const query = new Float64Array(space.df.length);
  // The `rescore` best candidates by partial score (ties by index), kept sorted, best first.
  const bestDoc = new Int32Array(rescore + 1);
  const bestScore = new Float64Array(rescore + 1);
  return (first: number, end: number): void => {
    for (let i = first; i < end; i++) {
      const from = docStart[i]!;
      const to = docStart[i + 1]!;
      if (from === to) continue;
      // A cut term adds at most w * heaviest[t] to any partial sum: one under `skipUnder` is not read.
      let strongest = 0;
      if (pruneRatio > 0) {
        for (let e = from; e < to; e++) {
          const bound = docWeight[e]! * heaviest[docTerm[e]!]!;
          if (bound > strongest) strongest = bound;
        }
      }
      const skipUnder = pruneRatio * strongest;
      let seen = 0;
      for (let e = from; e < to; e++) {
        const t = docTerm[e]!;
        const w = docWeight[e]!;
        // Set first: the exact rescoring below reads the whole query, skipped terms included.
        query[t] = w;
        if (cut[t] === 1 && w * heaviest[t]! < skipUnder) continue;
        const first = start[t]!;
        const last = start[t + 1]!;
        // Room for every posting of the term up front: no capacity test inside the hot loop.
        if (seen + last - first > touched.length) {
          const grown = new Uint32Array(Math.max(touched.length * 2, seen + last - first));
          grown.set(touched);
          touched = grown;
        }
        for (let p = first; p < last; p++) {
          const j = postDoc[p]!;
          const sum = partial[j]!;
          // partial[i] is never written, so i itself is only ever met here.
          if (sum === 0) {
            if (j === i) continue;
            touched[seen++] = j;
          }
          partial[j] = sum + w * postWeight[p]!;
        }
      }
      let size = 0;
      // The last kept candidate once `rescore` are kept (cached: the test below rejects most candidates).
      let floorScore = 0;
      let floorDoc = 0;
      for (let r = 0; r < seen; r++) {
        const j = touched[r]!;
        const value = partial[j]!;
        partial[j] = 0;
        if (size === rescore && (value < floorScore || (value === floorScore && j > floorDoc))) continue;
        let at = size < rescore ? size++ : size - 1;
        while (
          at > 0 &&
          (bestScore[at - 1]! < value || (bestScore[at - 1]! === value && bestDoc[at - 1]! > j))
        ) {
          bestScore[at] = bestScore[at - 1]!;
          bestDoc[at] = bestDoc[at - 1]!;
          at--;
        }
        bestScore[at] = value;
        bestDoc[at] = j;
        if (size === rescore) {
          floorScore = bestScore[size - 1]!;
          floorDoc = bestDoc[size - 1]!;
        }
      }
      for (let r = 0; r < size; r++) {
        const j = bestDoc[r]!;
        let sum = 0;
        for (let e = docStart[j]!; e < docStart[j + 1]!; e++) sum += query[docTerm[e]!]! * docWeight[e]!;
        const value = rankableScore(sum);
        // A pair is scored from both sides (j's search may have listed i already): a list holds it once. A
        // score under a full list's entry score is refused by offer anyway: testing it first spares most
        // offers the scan of a list that is rarely in cache (j's).
        if (value >= lists.threshold(i) && lists.scoreOf(i, j) === undefined) lists.offer(i, j, value);
        if (value >= lists.threshold(j) && lists.scoreOf(j, i) === undefined) lists.offer(j, i, value);
      }
      for (let e = from; e < to; e++) query[docTerm[e]!] = 0;
    }
  };
}
