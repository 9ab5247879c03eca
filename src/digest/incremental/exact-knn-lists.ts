import type { TfidfSpace } from '../semantic/tfidf-space.ts';
import { rankableScore, TopKLists } from '../semantic/top-k-lists.ts';

/** Same slack as the incremental searches (exact-top-k-search.ts): cutoffs are lowered by it. */
const SLACK = 1e-8;

/**
 * Exact top-k lists of every document of a space (ties by document index), for compaction. The same
 * MaxScore-with-split-budget search as exactTopK (see there), on typed arrays: postings sorted by weight
 * desc, the query scattered into a dense array so a candidate's exact cosine is one pass over its entries.
 * A scored pair is also offered to the other document's list when that one is searched later (it starts with
 * a higher provisional threshold); a search skips what its list already holds, and a list only improves, so
 * no pair ever enters one list twice.
 * Equal to sparseMutualKnn with maxPostings = Infinity, without its sum of df^2 work on common terms.
 */
export function exactKnnLists(space: TfidfSpace, k: number): TopKLists {
  const n = space.size;
  const vocabularySize = space.df.length;
  const { docStart, docTerm, docWeight, df } = space;
  const postings = space.invertedIndex();
  const start = postings.start;
  const postDoc = new Uint32Array(postings.doc.length);
  const postWeight = new Float32Array(postings.doc.length);
  for (let t = 0; t < vocabularySize; t++) {
    const from = start[t]!;
    const order = Array.from({ length: start[t + 1]! - from }, (_, i) => from + i).sort(
      (x, y) => postings.weight[y]! - postings.weight[x]! || postings.doc[x]! - postings.doc[y]!,
    );
    order.forEach((slot, i) => {
      postDoc[from + i] = postings.doc[slot]!;
      postWeight[from + i] = postings.weight[slot]!;
    });
  }

  const lists = new TopKLists(n, k);
  const query = new Float64Array(vocabularySize);
  const stamp = new Int32Array(n).fill(-1);
  const seeds: number[] = [];
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

  for (let i = 0; i < n; i++) {
    const from = docStart[i]!;
    const to = docStart[i + 1]!;
    if (from === to) continue;
    for (let e = from; e < to; e++) query[docTerm[e]!] = docWeight[e]!;
    stamp[i] = i;
    for (const { index } of lists.neighbours(i)) stamp[index] = i;
    // Seeds: the k heaviest postings of each term.
    seeds.length = 0;
    for (let e = from; e < to; e++) {
      const t = docTerm[e]!;
      for (let p = start[t]!; p < Math.min(start[t + 1]!, start[t]! + k); p++) {
        const j = postDoc[p]!;
        if (stamp[j] !== i) {
          stamp[j] = i;
          seeds.push(j);
        }
      }
    }
    for (const j of seeds) offer(i, j);
    const theta = lists.threshold(i) - SLACK;
    // Terms by upper bound q_t * maxWeight_t; skip the prefix summing below theta, split the rest by df.
    const terms: Array<{ t: number; q: number; upper: number }> = [];
    for (let e = from; e < to; e++) {
      const t = docTerm[e]!;
      terms.push({ t, q: docWeight[e]!, upper: docWeight[e]! * postWeight[start[t]!]! });
    }
    terms.sort((x, y) => x.upper - y.upper || x.t - y.t);
    let skipped = 0;
    let at = 0;
    if (theta > 0)
      while (at < terms.length && skipped + terms[at]!.upper < theta) skipped += terms[at++]!.upper;
    let mass = 0;
    for (let r = at; r < terms.length; r++) mass += df[terms[r]!.t]!;
    const rest = theta - skipped;
    for (let r = at; r < terms.length; r++) {
      const { t, q } = terms[r]!;
      const minWeight = theta > 0 ? (rest * df[t]!) / mass / q : 0;
      for (let p = start[t]!; p < start[t + 1]! && postWeight[p]! >= minWeight; p++) {
        const j = postDoc[p]!;
        if (stamp[j] === i) continue;
        stamp[j] = i;
        offer(i, j);
      }
    }
    for (let e = from; e < to; e++) query[docTerm[e]!] = 0;
  }
  return lists;
}
