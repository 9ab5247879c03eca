import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { denseMutualKnn } from '../../../src/digest/semantic/dense-mutual-knn.ts';
import { sparseMutualKnn } from '../../../src/digest/semantic/sparse-mutual-knn.ts';
import { sparseDot, TfidfSpace } from '../../../src/digest/semantic/tfidf-space.ts';
import { TopKLists } from '../../../src/digest/semantic/top-k-lists.ts';
import { bruteForceMutualKnn } from './brute-force-knn.ts';

const WORDS = 'apple river stone cloud lamp violin garden harbor tiger pencil orange mirror'.split(' ');
const textArb = fc
  .array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 8 })
  .map((words) => words.join(' '));

const key = (pairs: ReadonlyArray<{ a: number; b: number }>): string[] =>
  pairs.map((p) => `${p.a}-${p.b}`).sort();

describe('TopKLists', () => {
  it('keeps the k best by score, ties by lower index, ignoring non-positive scores', () => {
    const lists = new TopKLists(1, 3);
    for (const [other, score] of [
      [5, 0.5],
      [2, 0.9],
      [9, 0.5],
      [4, 0.5],
      [7, 0],
      [8, -1],
      [1, 0.2],
    ] as const) {
      lists.offer(0, other, score);
    }
    expect(lists.neighbours(0)).toEqual([
      { index: 2, score: 0.9 },
      { index: 4, score: 0.5 },
      { index: 5, score: 0.5 },
    ]);
    expect(lists.threshold(0)).toBe(0.5);
  });

  it('lists mutual pairs in (a, b) order, each once, with the mean of both scores', () => {
    // A store streams replaceEdges only for pairs in this order (else it diffs against every stored edge).
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(11), fc.nat(11), fc.integer({ min: 1, max: 6 })), { maxLength: 120 }),
        (offers) => {
          const lists = new TopKLists(12, 3);
          const offered = new Set<number>();
          for (const [i, j, score] of offers) {
            // A search offers each pair once.
            const pair = Math.min(i, j) * 12 + Math.max(i, j);
            if (i !== j && !offered.has(pair)) {
              offered.add(pair);
              lists.offer(i, j, score / 8);
              lists.offer(j, i, score / 8);
            }
          }
          const pairs = lists.mutualPairs();
          for (let at = 1; at < pairs.length; at++) {
            const [p, q] = [pairs[at - 1]!, pairs[at]!];
            expect(p.a < q.a || (p.a === q.a && p.b < q.b)).toBe(true);
          }
          const expected: string[] = [];
          for (let i = 0; i < 12; i++) {
            for (const { index: j, score } of lists.neighbours(i)) {
              const back = lists.scoreOf(j, i);
              if (j > i && back !== undefined) expected.push(`${i}-${j}:${(score + back) / 2}`);
            }
          }
          expect(pairs.map((p) => `${p.a}-${p.b}:${p.similarity}`).sort()).toEqual(expected.sort());
        },
      ),
    );
  });
});

describe('sparseMutualKnn', () => {
  it('equals brute force when exact, for every k (differential, random small corpora)', () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        (texts, k) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const exact = sparseMutualKnn(space, { k, maxPostings: Number.POSITIVE_INFINITY });
          const brute = bruteForceMutualKnn(space.size, k, (i, j) =>
            sparseDot(space.vector(i), space.vector(j)),
          );
          expect(key(exact.pairs)).toEqual(key(brute));
          for (const pair of exact.pairs) {
            const other = brute.find((b) => b.a === pair.a && b.b === pair.b)!;
            expect(pair.similarity).toBeCloseTo(other.similarity, 9);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('is symmetric, caps degree at k and scores exact cosines, also when pruning', () => {
    fc.assert(
      fc.property(
        fc.array(textArb, { minLength: 2, maxLength: 60 }),
        fc.integer({ min: 2, max: 6 }),
        (texts, cap) => {
          const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
          const k = 3;
          const result = sparseMutualKnn(space, { k, maxPostings: cap });
          const degree = new Map<number, number>();
          for (const pair of result.pairs) {
            expect(pair.a).toBeLessThan(pair.b);
            expect(result.lists.scoreOf(pair.a, pair.b)).toBe(result.lists.scoreOf(pair.b, pair.a));
            expect(pair.similarity).toBeCloseTo(sparseDot(space.vector(pair.a), space.vector(pair.b)), 6);
            for (const end of [pair.a, pair.b]) degree.set(end, (degree.get(end) ?? 0) + 1);
          }
          for (const count of degree.values()) expect(count).toBeLessThanOrEqual(k);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('with pruning agrees closely with exact on a few thousand topical documents', () => {
    let state = 12345;
    const rand = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32;
    };
    const texts: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const topic = Math.floor(rand() * 100);
      const words: string[] = [];
      for (let w = 0; w < 15; w++) {
        words.push(
          rand() < 0.4
            ? `topic${topic}w${Math.floor(rand() * 20)}`
            : `common${Math.floor(rand() * 300 * rand())}`,
        );
      }
      texts.push(words.join(' '));
    }
    const space = new TfidfSpace(texts.map((text, i) => ({ id: `d${i}`, text })));
    const exact = sparseMutualKnn(space, { maxPostings: Number.POSITIVE_INFINITY });
    const approx = sparseMutualKnn(space, { maxPostings: 64 });
    expect(approx.prunedTerms).toBeGreaterThan(0);
    expect(approx.scoredPairs).toBeLessThan(exact.scoredPairs);
    const exactKeys = new Set(key(exact.pairs));
    const hits = key(approx.pairs).filter((pair) => exactKeys.has(pair)).length;
    expect(hits / exact.pairs.length).toBeGreaterThan(0.95);
  });
});

describe('denseMutualKnn', () => {
  const vectorArb = fc.array(fc.float({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 });

  it('equals brute force in exact mode', () => {
    fc.assert(
      fc.property(
        fc.array(vectorArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 8 }),
        (raw, k) => {
          const vectors = raw.map((values) => Float32Array.from(values));
          const unit = vectors.map((v) => {
            const norm = Math.hypot(...v);
            return norm > 0 ? v.map((x) => x / norm) : new Float32Array(0);
          });
          const cos = (i: number, j: number): number => {
            let sum = 0;
            for (let d = 0; d < Math.min(unit[i]!.length, unit[j]!.length); d++)
              sum += unit[i]![d]! * unit[j]![d]!;
            return sum;
          };
          const result = denseMutualKnn(vectors, { k });
          expect(result.method).toBe('exact');
          expect(key(result.pairs)).toEqual(key(bruteForceMutualKnn(vectors.length, k, cos)));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('uses LSH above the exact limit, deterministically, with high agreement on clustered data', () => {
    let state = 99;
    const rand = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 2 ** 32 - 0.5;
    };
    const centres = Array.from({ length: 40 }, () => Float32Array.from({ length: 32 }, rand));
    const vectors = Array.from({ length: 1200 }, (_, i) =>
      centres[i % 40]!.map((value) => value + 0.15 * rand()),
    );
    const exact = denseMutualKnn(vectors, { exactLimit: 5000 });
    const lsh = denseMutualKnn(vectors, { exactLimit: 100 });
    expect(lsh.method).toBe('lsh');
    expect(lsh.scoredPairs).toBeLessThan(exact.scoredPairs);
    expect(key(denseMutualKnn(vectors, { exactLimit: 100 }).pairs)).toEqual(key(lsh.pairs));
    const exactKeys = new Set(key(exact.pairs));
    const hits = key(lsh.pairs).filter((pair) => exactKeys.has(pair)).length;
    expect(hits / exact.pairs.length).toBeGreaterThan(0.9);
  });
});
