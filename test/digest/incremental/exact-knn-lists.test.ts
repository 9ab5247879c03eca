import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactKnnLists } from '../../../src/digest/incremental/exact-knn-lists.ts';
import { sparseMutualKnn } from '../../../src/digest/semantic/sparse-mutual-knn.ts';
import { TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';

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
