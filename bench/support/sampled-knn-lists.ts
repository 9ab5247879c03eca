import { boundedKnnIndex } from '../../src/digest/incremental/bounded-knn-lists.ts';
import type { KnnSpace } from '../../src/digest/semantic/tfidf-space.ts';
import { rankableScore, TopKLists } from '../../src/digest/semantic/top-k-lists.ts';

/**
 * The exact top-k lists of a sample of documents, by brute force over every posting of their terms: how an
 * approximate pass (boundedKnnLists) is checked at sizes where the exact all-pairs pass takes hours (1M).
 * Ranked as exactKnnLists ranks (rankableScore desc, then index asc; scores <= 0 never listed), so on a space
 * the exact pass can also build the two agree list for list (test/bench/sampled-knn-lists.test.ts).
 */
export function sampledExactLists(
  space: KnnSpace,
  k: number,
  sample: readonly number[],
): Map<number, number[]> {
  const { docStart, docTerm, docWeight } = space;
  // With no cut, the bounded pass's index is every posting of every term, in document order.
  const { start, postDoc, postWeight } = boundedKnnIndex(space, k, {
    maxPostingsPerTerm: Number.POSITIVE_INFINITY,
  });
  const partial = new Float64Array(space.size);
  const lists = new Map<number, number[]>();
  for (const i of sample) {
    const touched: number[] = [];
    for (let e = docStart[i]!; e < docStart[i + 1]!; e++) {
      const w = docWeight[e]!;
      const t = docTerm[e]!;
      for (let p = start[t]!; p < start[t + 1]!; p++) {
        const j = postDoc[p]!;
        if (j === i) continue;
        if (partial[j] === 0) touched.push(j);
        partial[j] = partial[j]! + w * postWeight[p]!;
      }
    }
    // One list, ranked by the exact pass's own rule (TopKLists.offer: score desc, index asc, > 0 only).
    const best = new TopKLists(1, k);
    for (const j of touched) {
      best.offer(0, j, rankableScore(partial[j]!));
      partial[j] = 0;
    }
    lists.set(
      i,
      best.neighbours(0).map((entry) => entry.index),
    );
  }
  return lists;
}

/** `count` distinct non-empty documents of the space, drawn with a seeded generator. */
export function sampleDocuments(space: KnnSpace, count: number, seed: number): number[] {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    // xorshift32: enough for a reproducible draw, no dependency.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const nonEmpty = (i: number): boolean => space.docStart[i + 1]! > space.docStart[i]!;
  let available = 0;
  for (let i = 0; i < space.size; i++) if (nonEmpty(i)) available++;
  const want = Math.min(count, available);
  const picked = new Set<number>();
  while (picked.size < want) {
    const i = Math.floor(next() * space.size);
    if (nonEmpty(i)) picked.add(i);
  }
  return [...picked];
}

/** Share of the sampled exact lists' entries that `lists` holds, and share of sampled lists it holds whole. */
export function sampledListRecall(
  lists: TopKLists,
  exact: ReadonlyMap<number, readonly number[]>,
): { recall: number; complete: number } {
  let entries = 0;
  let found = 0;
  let complete = 0;
  for (const [i, want] of exact) {
    const have = new Set(lists.neighbours(i).map((x) => x.index));
    let hit = 0;
    for (const j of want) if (have.has(j)) hit++;
    entries += want.length;
    found += hit;
    if (hit === want.length) complete++;
  }
  return {
    recall: entries === 0 ? 1 : found / entries,
    complete: exact.size === 0 ? 1 : complete / exact.size,
  };
}
