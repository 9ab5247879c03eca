import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundedKnnIndex, boundedKnnLists } from '../../../src/digest/incremental/bounded-knn-lists.ts';
import { exactKnnLists } from '../../../src/digest/incremental/exact-knn-lists.ts';
import { sparseMutualKnn } from '../../../src/digest/semantic/sparse-mutual-knn.ts';
import { sparseDot, TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import { rankableScore } from '../../../src/digest/semantic/top-k-lists.ts';

const WORDS = 'apple river stone cloud lamp violin garden harbor tiger pencil orange mirror'.split(' ');
// Skewed: the first words are in most documents (long posting lists, many ties).
const textArb = fc
  .array(fc.integer({ min: 0, max: 999 }), { minLength: 0, maxLength: 9 })
  .map((draws) => draws.map((d) => WORDS[Math.floor((d / 1000) ** 2 * WORDS.length)]!).join(' '));

const lists = (space: TfidfSpace, k: number, tuning: Parameters<typeof exactKnnLists>[2]) => {
  const result = exactKnnLists(space, k, tuning);
  return Array.from({ length: space.size }, (_, i) => result.neighbours(i));
};

describe('exactKnnLists', () => {
  // Small commonDf and various tau put most entries in the unindexed suffixes, so the Cauchy-Schwarz scan
  // (not the posting reads) has to find the neighbours: a wrong bound drops a neighbour here.
  it('equals the uncapped exact rebuild whatever part of each document is left out of the index', () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom(0.05, 0.3, 0.6, 0.9, 1.01),
        (texts, k, commonDf, tau) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const exact = sparseMutualKnn(space, { k, maxPostings: Number.POSITIVE_INFINITY });
          const result = exactKnnLists(space, k, { commonDf, tau });
          expect(result.mutualPairs()).toEqual(exact.pairs);
          // The lists themselves (not only the mutual pairs) match the default tuning's.
          expect(lists(space, k, { commonDf, tau })).toEqual(lists(space, k, { commonDf: 1e9 }));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('boundedKnnLists (bulk imports of large contexts)', () => {
  const neighbours = (result: ReturnType<typeof exactKnnLists>, n: number) =>
    Array.from({ length: n }, (_, i) => result.neighbours(i));

  // No term in more than maxPostingsPerTerm documents and every candidate rescored: every document sharing a
  // term with another is scored, so the bounded pass is provably complete: it must give the exact lists.
  it('gives the exact lists when no posting list or candidate set reaches its bound', () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        (texts, k) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const exact = sparseMutualKnn(space, { k, maxPostings: Number.POSITIVE_INFINITY });
          // Defaults for the postings (1,024 > 60 documents); every candidate rescored.
          const bounded = boundedKnnLists(space, k, { rescore: space.size });
          expect(bounded.mutualPairs()).toEqual(exact.pairs);
          expect(neighbours(bounded, space.size)).toEqual(neighbours(exactKnnLists(space, k), space.size));
        },
      ),
      { numRuns: 150 },
    );
  });

  // Cut hard (2 postings per term, 1 candidate rescored), the lists lose neighbours, but every entry is
  // still a true cosine of a real pair, listed once, ranked as the exact lists rank them.
  it('when it cuts, lists only true scores, best first, and differs from the exact lists', () => {
    const texts = Array.from({ length: 80 }, (_, i) =>
      [WORDS[i % 3], WORDS[(i * 7) % 5], WORDS[i % 2], i % 4 === 0 ? WORDS[11] : ''].join(' '),
    );
    const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
    const bounded = boundedKnnLists(space, 4, { maxPostingsPerTerm: 2, rescore: 1 });
    const exact = exactKnnLists(space, 4);
    let entries = 0;
    for (let i = 0; i < space.size; i++) {
      const list = bounded.neighbours(i);
      expect(new Set(list.map((x) => x.index)).size).toBe(list.length);
      for (const [at, { index, score }] of list.entries()) {
        entries++;
        expect(index).not.toBe(i);
        expect(score).toBe(rankableScore(sparseDot(space.vector(i), space.vector(index))));
        if (at > 0) expect(list[at - 1]!.score).toBeGreaterThanOrEqual(score);
      }
    }
    expect(entries).toBeGreaterThan(0);
    expect(neighbours(bounded, space.size)).not.toEqual(neighbours(exact, space.size));
  });

  // Docs 0 and 1 share only "lake", a common word whose list is cut (in 10 documents, 2 kept): its weight in
  // each is far under their rare word's, so with the default pruneRatio neither reads it and the pair is lost.
  const weakShared = () =>
    new TfidfSpace(
      ['quartz lake', 'mango lake', ...Array.from({ length: 8 }, (_, i) => `lake w${i}a w${i}b w${i}c`)].map(
        (text, i) => ({ id: `d${i}`, text }),
      ),
    );

  it("skips a document's cut term whose contribution is under pruneRatio of its strongest term's", () => {
    const space = weakShared();
    const index = boundedKnnIndex(space, 4, { maxPostingsPerTerm: 2 });
    const lake = space.df.indexOf(10);
    expect(index.cut[lake]).toBe(1);
    expect(index.pruneRatio).toBe(0.4);
    const read = boundedKnnLists(space, 4, { maxPostingsPerTerm: 2, pruneRatio: 0 });
    // Read: every document meets 0 and 1 (the kept postings), and lists them or is listed by them.
    expect(read.neighbours(0).map((x) => x.index)).toEqual([1, 2, 3, 4]);
    expect(read.neighbours(5).map((x) => x.index)).toEqual([0, 1]);
    // Skipped by every document (each one's own words weigh far more): no candidate at all.
    const pruned = boundedKnnLists(space, 4, { maxPostingsPerTerm: 2 });
    expect(neighbours(pruned, space.size).every((list) => list.length === 0)).toBe(true);
    // Uncut, the same term is always read: pruning never skips a term whose list is whole.
    const whole = boundedKnnLists(space, 4, { maxPostingsPerTerm: 1024, rescore: space.size });
    expect(neighbours(whole, space.size)).toEqual(neighbours(exactKnnLists(space, 4), space.size));
    expect(() => boundedKnnIndex(space, 4, { pruneRatio: 1.5 })).toThrow(RangeError);
  });

  it('keeps per term its heaviest kept weight and whether its list was cut; with nothing cut, pruning changes nothing', () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (texts, maxPostingsPerTerm, pruneRatio) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const index = boundedKnnIndex(space, 4, { maxPostingsPerTerm, pruneRatio });
          for (let t = 0; t < space.df.length; t++) {
            const kept = Array.from(index.postWeight.subarray(index.start[t]!, index.start[t + 1]!));
            expect(index.heaviest[t]).toBe(kept.length === 0 ? 0 : Math.max(...kept));
            expect(index.cut[t]).toBe(space.df[t]! > maxPostingsPerTerm ? 1 : 0);
          }
          const uncut = { maxPostingsPerTerm: 1024, rescore: 3 };
          expect(neighbours(boundedKnnLists(space, 4, { ...uncut, pruneRatio }), space.size)).toEqual(
            neighbours(boundedKnnLists(space, 4, { ...uncut, pruneRatio: 0 }), space.size),
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("indexes each term's maxPostingsPerTerm heaviest documents (ties by document), in document order", () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        (texts, maxPostingsPerTerm) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const index = boundedKnnIndex(space, 4, { maxPostingsPerTerm });
          for (let t = 0; t < space.df.length; t++) {
            // Reference: every (document, weight) of the term, heaviest first, ties by document; cut; by document.
            const all: Array<{ doc: number; weight: number }> = [];
            for (let d = 0; d < space.size; d++) {
              for (let e = space.docStart[d]!; e < space.docStart[d + 1]!; e++) {
                if (space.docTerm[e] === t) all.push({ doc: d, weight: space.docWeight[e]! });
              }
            }
            const kept = all
              .sort((x, y) => y.weight - x.weight || x.doc - y.doc)
              .slice(0, maxPostingsPerTerm)
              .sort((x, y) => x.doc - y.doc);
            const from = index.start[t]!;
            const to = index.start[t + 1]!;
            expect(Array.from(index.postDoc.subarray(from, to))).toEqual(kept.map((x) => x.doc));
            expect(Array.from(index.postWeight.subarray(from, to))).toEqual(kept.map((x) => x.weight));
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
