import { describe, expect, it } from 'vitest';
import { chatRecords } from '../../bench/support/realistic-chat.ts';
import {
  sampleDocuments,
  sampledExactLists,
  sampledListRecall,
} from '../../bench/support/sampled-knn-lists.ts';
import { boundedKnnLists } from '../../src/digest/incremental/bounded-knn-lists.ts';
import { exactKnnLists } from '../../src/digest/incremental/exact-knn-lists.ts';
import { buildTfidfSpace } from '../../src/digest/semantic/tfidf-space.ts';
import { TopKLists } from '../../src/digest/semantic/top-k-lists.ts';

// The bench's agreement figure at 1M rests on these lists being the exact pass's lists.
describe('sampled exact kNN lists (bench/exact-knn-bench.ts --sample)', () => {
  const space = buildTfidfSpace([...chatRecords({ contextId: 'c', count: 3000, seed: 5 })]);
  const exact = exactKnnLists(space, 8);

  it('equal the exact all-pairs lists, entry for entry and in order, for every sampled document', () => {
    const sample = sampleDocuments(space, 400, 7);
    const sampled = sampledExactLists(space, 8, sample);
    expect(sampled.size).toBe(400);
    for (const i of sample) expect(sampled.get(i)).toEqual(exact.neighbours(i).map((x) => x.index));
    expect(sampledListRecall(exact, sampled)).toEqual({ recall: 1, complete: 1 });
  });

  it('breaks ties by index, as the exact pass does', () => {
    // 13 documents of one term at one weight: every pair scores 1, so each list is the 8 lowest other indices.
    const n = 13;
    const tied = {
      size: n,
      docStart: Uint32Array.from({ length: n + 1 }, (_, i) => i),
      docTerm: new Uint32Array(n),
      docWeight: new Float32Array(n).fill(1),
      df: Uint32Array.of(n),
    };
    const lists = sampledExactLists(tied, 8, [0, 5, 12]);
    expect(lists.get(0)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(lists.get(5)).toEqual([0, 1, 2, 3, 4, 6, 7, 8]);
    expect(lists.get(12)).toEqual(
      exactKnnLists(tied, 8)
        .neighbours(12)
        .map((x) => x.index),
    );
  });

  it('draws distinct non-empty documents, the same for a seed, and no more than there are', () => {
    const a = sampleDocuments(space, 200, 3);
    expect(new Set(a).size).toBe(200);
    expect(a.every((i) => space.docStart[i + 1]! > space.docStart[i]!)).toBe(true);
    expect(sampleDocuments(space, 200, 3)).toEqual(a);
    expect(sampleDocuments(space, 200, 4)).not.toEqual(a);
    expect(sampleDocuments(space, space.size + 50, 3).length).toBeLessThanOrEqual(space.size);
  });

  it('counts what an approximate pass misses', () => {
    const sample = sampleDocuments(space, 300, 9);
    const sampled = sampledExactLists(space, 8, sample);
    // A hard cut (16 postings a term, 8 rescored) misses neighbours: recall under 1, measured not assumed.
    const cut = sampledListRecall(boundedKnnLists(space, 8, { maxPostingsPerTerm: 16, rescore: 8 }), sampled);
    expect(cut.recall).toBeLessThan(1);
    expect(cut.recall).toBeGreaterThan(0);
    expect(cut.complete).toBeLessThan(1);
    // Empty lists hold nothing.
    expect(sampledListRecall(new TopKLists(space.size, 8), sampled).recall).toBe(0);
  });
});
