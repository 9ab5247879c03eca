import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { STOPWORDS, stem, tokenize } from '../../src/retrieval/tokenize.ts';

describe('tokenize', () => {
  it('lowercases, splits, drops stopwords, keeps numbers and stems plurals', () => {
    expect(tokenize("The Cities of John's photos, 2024-06-03 & 3 buses!")).toEqual([
      'city',
      'john',
      'photo',
      '2024',
      '06',
      '03',
      '3',
      'buse',
    ]);
    expect(tokenize("I don't know")).toEqual(['know']);
    expect(tokenize('Café MÜNCHEN')).toEqual(['café', 'münchen']);
    expect(tokenize('東京tower')).toEqual(['東', '京', 'tower']);
    expect(stem('bus')).toBe('bus');
    expect(stem('glass')).toBe('glass');
    expect(stem('series')).toBe('sery');
    expect(STOPWORDS.has('the')).toBe(true);
  });

  it('never yields empty tokens or stopwords', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        for (const token of tokenize(text)) {
          expect(token.length).toBeGreaterThan(0);
          expect(STOPWORDS.has(token)).toBe(false);
        }
      }),
    );
  });
});

describe('Bm25Index', () => {
  it('matches the BM25 formula on a hand-computed case', () => {
    const index = Bm25Index.build([
      { memoryId: 'a', kind: 'text', key: 'main', text: 'apple banana' },
      { memoryId: 'b', kind: 'text', key: 'main', text: 'cherry' },
      { memoryId: 'c', kind: 'text', key: 'main', text: 'cherry cherry date' },
    ]);
    const [hit] = index.search('apple', { limit: 5 });
    const idf = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
    const avg = (2 + 1 + 3) / 3;
    const expected = (idf * 1 * (BM25_K1 + 1)) / (1 + BM25_K1 * (1 - BM25_B + (BM25_B * 2) / avg));
    expect(hit).toEqual({ memoryId: 'a', kind: 'text', key: 'main', rawScore: expected });
    // Length normalisation: one "cherry" in a 1-token view beats two in a 3-token view (tf parts 1.257 vs 1.205).
    const cherry = index.search('cherry', { limit: 5 });
    expect(cherry.map((h) => h.memoryId)).toEqual(['b', 'c']);
    const cherryIdf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
    expect(cherry[0]!.rawScore).toBeCloseTo(cherryIdf * 1.2571, 3);
    expect(cherry[1]!.rawScore).toBeCloseTo(cherryIdf * 1.2055, 3);
  });

  it('scores equal numbers computed by hand (k1 = 1.2, b = 0.75, Lucene idf), not the formula of the code', () => {
    // N = 3 views of lengths 2, 1, 3 (average 2).
    // apple:  df 1, idf = ln(1 + 2.5/1.5) = 0.9808292530; view a: tf 1, len 2 -> 2.2 / (1 + 1.2 * 1) = 1.
    // cherry: df 2, idf = ln(1 + 1.5/2.5) = 0.4700036292;
    //   view b: tf 1, len 1 -> 2.2 / (1 + 1.2 * 0.625) = 1.2571428571 -> 0.5908617053;
    //   view c: tf 2, len 3 -> 4.4 / (2 + 1.2 * 1.375) = 1.2054794521 -> 0.5665797174.
    const index = Bm25Index.build([
      { memoryId: 'a', kind: 'text', key: 'main', text: 'apple banana' },
      { memoryId: 'b', kind: 'text', key: 'main', text: 'cherry' },
      { memoryId: 'c', kind: 'text', key: 'main', text: 'cherry cherry date' },
    ]);
    expect(index.search('apple', { limit: 5 }).map((h) => h.rawScore)).toEqual([
      expect.closeTo(0.9808292530117263, 12),
    ]);
    const cherry = index.search('cherry', { limit: 5 });
    expect(cherry.map((h) => [h.memoryId, h.rawScore])).toEqual([
      ['b', expect.closeTo(0.5908617053374963, 12)],
      ['c', expect.closeTo(0.5665797174469143, 12)],
    ]);
    // Two query terms add up: "apple cherry" scores a with apple only and b, c with cherry only.
    expect(index.search('apple cherry', { limit: 5 }).map((h) => h.memoryId)).toEqual(['a', 'b', 'c']);
  });

  it('keeps statistics per view kind and applies limit per kind', () => {
    const index = Bm25Index.build([
      { memoryId: 'a', kind: 'text', key: 'main', text: 'june trip' },
      { memoryId: 'b', kind: 'text', key: 'main', text: 'june' },
      { memoryId: 'a', kind: 'metadata', key: 'main', text: 'june 2024' },
      { memoryId: 'b', kind: 'caption', key: 'x', text: 'a dog' },
    ]);
    const hits = index.search('june dog', { limit: 1 });
    expect(hits.map((h) => `${h.memoryId}:${h.kind}`).sort()).toEqual(['a:metadata', 'b:caption', 'b:text']);
    expect(index.search('june', { limit: 5, kinds: ['metadata'] }).map((h) => h.memoryId)).toEqual(['a']);
    expect(index.size).toBe(4);
  });
});

describe('Bm25Index incremental maintenance', () => {
  it('add / removeMemory give exactly the index a fresh build over the remaining documents gives', () => {
    const word = fc.constantFrom('apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date');
    const doc = fc.record({
      memoryId: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      kind: fc.constantFrom('text' as const, 'caption' as const),
      key: fc.constantFrom('main', 'x'),
      text: fc.array(word, { maxLength: 8 }).map((words) => words.join(' ')),
    });
    fc.assert(
      fc.property(
        fc.array(doc, { maxLength: 30 }),
        fc.array(fc.constantFrom('a', 'b', 'c', 'd')),
        (docs, removed) => {
          const index = Bm25Index.build(docs);
          for (const id of removed) index.removeMemory(id);
          const fresh = Bm25Index.build(docs.filter((d) => !(removed as string[]).includes(d.memoryId)));
          expect(index.size).toBe(fresh.size);
          for (const query of ['apple', 'pear plum fig', 'kiwi lime date apple']) {
            for (const limit of [1, 3, 50]) {
              expect(index.search(query, { limit })).toEqual(fresh.search(query, { limit }));
            }
          }
        },
      ),
    );
  });
});
