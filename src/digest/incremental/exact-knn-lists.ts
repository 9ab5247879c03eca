import { sharedArray, sharedCopy } from '../semantic/shared-array.ts';
import type { KnnSpace } from '../semantic/tfidf-space.ts';
import { rankableScore, TopKLists } from '../semantic/top-k-lists.ts';
import { reportWork, WORK_UNIT, workBoundPassed } from './exact-work-bound.ts';

/** Same slack as the incremental searches (exact-top-k-search.ts): cutoffs are lowered by it. */
const SLACK = 1e-8;
/** Relative margin on Cauchy-Schwarz bounds taken from float32 weights (rounding of the norms). */
const NORM_MARGIN = 1 + 1e-6;

/** Tuning of the all-pairs search (exported for the benchmark; both keep the result exact). */
export interface ExactKnnTuning {
  /** Terms in more documents than this are "common" (default 1,024). */
  commonDf?: number;
  /** Largest norm of a document's unindexed common part (default 0.5). */
  tau?: number;
}

/**
 * Exact top-k lists of every document of a space (ties by document index), for compaction. Equal to
 * sparseMutualKnn with maxPostings = Infinity (test/digest/incremental/semantic-knn.test.ts), without reading
 * the long posting lists of common terms.
 *
 * Why: posting lists of common words grow with the context, and on chat text most 8th-neighbour cosines are
 * low (0.1-0.3), so weight cutoffs on those lists barely prune: the previous search (MaxScore with a split
 * budget) read ~1.3k postings per document at 10k, 2.9k at 30k and 8.4k at 100k (n^1.9 in all).
 *
 * How (a norm-bounded partial index, after the L2 prefix bounds of all-pairs similarity search): a term in
 * more than `commonDf` documents is common. Each document leaves its most common terms (df desc) out of the
 * index while their norm, its **suffix norm** s_j, stays below `tau`; every other entry is indexed. A query
 * i reads the whole indexed posting list of each of its terms and scores every document found exactly (from
 * its full vector, scattered query). A document j not found shares with i only terms of its unindexed
 * suffix, all common, so by Cauchy-Schwarz cos(i, j) <= |q_common| * s_j, where |q_common| is the norm of
 * i's common terms. Documents sorted by s_j desc are then scanned while |q_common| * s_j reaches i's current
 * k-th score: nothing unscored can enter the list. For a typical query, mostly rare words, |q_common| is
 * small and the scan stops at once; for a query of common words it reads the documents of common words.
 * Defaults measured on 1,000 sampled queries of realistic chat (bench/support/realistic-chat.ts) at 100k:
 * postings + scanned documents per query 1,299 + 39 (commonDf 1,024, tau 0.5), 609 + 6,369 (256, 0.6),
 * 5,554 + 0 (256, 0.3), 3,019 + 0 (4,096, 0.5); the previous search read 8,433.
 * A scored pair is also offered to the other document's list when that one is searched later (it starts
 * with a higher threshold); a search skips what its list already holds, and a list only improves, so no
 * pair ever enters one list twice. For the same reason a search reads, in the list of a term indexed for
 * its own document, only the documents after it: each earlier one met it through that term and the pair is
 * already offered both ways (~half the postings read, same lists: an offer made again changes nothing).
 */
export function exactKnnLists(space: KnnSpace, k: number, tuning: ExactKnnTuning = {}): TopKLists {
  const lists = new TopKLists(space.size, k);
  exactKnnSearcher(exactKnnIndex(space, tuning), lists)(0, space.size);
  return lists;
}

/**
 * The index exactKnnLists searches: each document's indexed entries in posting lists (document order), its
 * suffix norm, and the documents with a suffix by norm desc. Arrays on SharedArrayBuffers, so the threads of
 * parallelKnnLists read one copy.
 */
export interface ExactKnnIndex {
  kind: 'exact';
  space: KnnSpace;
  commonDf: number;
  indexed: Uint8Array;
  suffixNorm: Float64Array;
  start: Uint32Array;
  postDoc: Uint32Array;
  bySuffix: Uint32Array;
}

/** Builds the index of exactKnnLists (one pass over the entries; the search is the costly part). */
export function exactKnnIndex(space: KnnSpace, tuning: ExactKnnTuning = {}): ExactKnnIndex {
  const build = exactKnnIndexSlices(space, tuning);
  for (let step = build.next(); ; step = build.next()) if (step.done) return step.value;
}

/** Documents whose entries exactKnnIndexSlices sorts between two of its yields. */
export const INDEX_SLICE = 4096;

/**
 * The same index, built in slices: yields after every INDEX_SLICE documents of its per-document sort (the
 * costly part: ~0.1 s at 100k), every 4 x INDEX_SLICE of its posting fill and before its last sort, so a
 * caller that pauses there (a compaction in steps) lets the writes queued on its thread run between them
 * (docs/living-archive.md "Round 27").
 */
export function* exactKnnIndexSlices(
  space: KnnSpace,
  tuning: ExactKnnTuning = {},
): Generator<void, ExactKnnIndex, void> {
  const commonDf = tuning.commonDf ?? 1024;
  const tau = tuning.tau ?? 0.5;
  const n = space.size;
  const vocabularySize = space.df.length;
  const { docStart, docTerm, docWeight, df } = space;

  // Split each document: suffix (its most common terms, norm < tau, not indexed) and the indexed rest.
  const indexed = sharedArray(Uint8Array, docTerm.length);
  const suffixNorm = sharedArray(Float64Array, n);
  const count = new Uint32Array(vocabularySize + 1);
  const order: number[] = [];
  for (let j = 0; j < n; j++) {
    order.length = 0;
    for (let e = docStart[j]!; e < docStart[j + 1]!; e++) order.push(e);
    order.sort((x, y) => df[docTerm[y]!]! - df[docTerm[x]!]! || docTerm[y]! - docTerm[x]!);
    let squares = 0;
    let r = 0;
    for (; r < order.length; r++) {
      const e = order[r]!;
      const w = docWeight[e]!;
      if (df[docTerm[e]!]! <= commonDf || Math.sqrt(squares + w * w) >= tau) break;
      squares += w * w;
    }
    suffixNorm[j] = Math.sqrt(squares);
    for (; r < order.length; r++) {
      indexed[order[r]!] = 1;
      count[docTerm[order[r]!]! + 1]!++;
    }
    if ((j + 1) % INDEX_SLICE === 0) yield;
  }
  const start = sharedArray(Uint32Array, vocabularySize + 1);
  for (let t = 0; t < vocabularySize; t++) start[t + 1] = start[t]! + count[t + 1]!;
  const fill = start.slice(0, vocabularySize);
  const postDoc = sharedArray(Uint32Array, start[vocabularySize]!);
  for (let j = 0; j < n; j++) {
    for (let e = docStart[j]!; e < docStart[j + 1]!; e++) if (indexed[e]) postDoc[fill[docTerm[e]!]!++] = j;
    if ((j + 1) % (4 * INDEX_SLICE) === 0) yield;
  }
  // The sort below is one stretch (~50 ms at 100k): not together with the fill's last slice.
  yield;
  const suffixed = Array.from({ length: n }, (_, j) => j)
    .filter((j) => suffixNorm[j]! > 0)
    .sort((x, y) => suffixNorm[y]! - suffixNorm[x]! || x - y);
  const bySuffix = sharedCopy(Uint32Array, suffixed);
  return { kind: 'exact', space, commonDf, indexed, suffixNorm, start, postDoc, bySuffix };
}

/**
 * Searches documents [from, to) of the index into `lists`: call it with ranges in ascending order (a search
 * reads only the later documents of a term indexed for its own document, relying on the earlier ones having
 * found it). Lists that hold only some threads' offers stay exact once merged (parallel-knn-lists.ts): a list
 * missing earlier offers has a lower threshold, so its search only scores more candidates.
 */
export function exactKnnSearcher(
  index: ExactKnnIndex,
  lists: TopKLists,
  work?: Int32Array,
): (from: number, to: number) => void {
  const { space, commonDf, indexed, suffixNorm, start, postDoc, bySuffix } = index;
  const n = space.size;
  const { docStart, docTerm, docWeight, df } = space;
  const query = new Float64Array(df.length);
  const stamp = new Int32Array(n).fill(-1);
  const score = (j: number): number => {
    let sum = 0;
    for (let e = docStart[j]!; e < docStart[j + 1]!; e++) sum += query[docTerm[e]!]! * docWeight[e]!;
    return rankableScore(sum);
  };
  const offer = (i: number, j: number): void => {
    const value = score(j);
    lists.offer(i, j, value);
    // A document searched before i already has its exact list (i was among its candidates).
    if (j > i) lists.offer(j, i, value);
  };

  // Candidates visited (postings read, documents scanned) and documents searched since the last report to
  // the shared work bound (exact-work-bound.ts).
  let visits = 0;
  let searched = 0;
  return (from: number, to: number): void => {
    if (work === undefined) {
      for (let i = from; i < to; i++) searchOne(i);
      return;
    }
    for (let i = from; i < to; i++) {
      // Passed (by this thread or another): the lists are not used, so the rest is not searched.
      if (workBoundPassed(work)) return;
      searchOne(i);
      searched++;
      if (visits < WORK_UNIT) continue;
      visits = reportWork(work, visits, searched, n);
      searched = 0;
    }
  };

  function searchOne(i: number): void {
    const from = docStart[i]!;
    const to = docStart[i + 1]!;
    if (from === to) return;
    let commonSquares = 0;
    for (let e = from; e < to; e++) {
      query[docTerm[e]!] = docWeight[e]!;
      if (df[docTerm[e]!]! > commonDf) commonSquares += docWeight[e]! * docWeight[e]!;
    }
    stamp[i] = i;
    for (const { index: held } of lists.neighbours(i)) stamp[held] = i;
    for (let e = from; e < to; e++) {
      const t = docTerm[e]!;
      const end = start[t + 1]!;
      // A term indexed for i too: every document before i in its list (lists are in document order) found i
      // in its own search through this same term and offered the pair to both lists then; only later ones.
      const first = indexed[e] ? firstAfter(postDoc, start[t]!, end, i) : start[t]!;
      visits += end - first;
      for (let p = first; p < end; p++) {
        const j = postDoc[p]!;
        if (stamp[j] === i) continue;
        stamp[j] = i;
        offer(i, j);
      }
    }
    const commonNorm = Math.sqrt(commonSquares) * NORM_MARGIN;
    let r = 0;
    for (; commonNorm > 0 && r < bySuffix.length; r++) {
      const j = bySuffix[r]!;
      if (commonNorm * suffixNorm[j]! < lists.threshold(i) - SLACK) break;
      if (stamp[j] === i) continue;
      stamp[j] = i;
      offer(i, j);
    }
    visits += r;
    for (let e = from; e < to; e++) query[docTerm[e]!] = 0;
  }
}

/** First position in postDoc[from, to) (ascending documents) holding a document after `doc`. */
function firstAfter(postDoc: Uint32Array, from: number, to: number, doc: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (postDoc[middle]! <= doc) low = middle + 1;
    else high = middle;
  }
  return low;
}
