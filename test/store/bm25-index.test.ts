import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BM25_B, BM25_K1, Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { INVARIANT_WORDS, STOPWORDS, stem, tokenize } from '../../src/retrieval/tokenize.ts';

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
      'bus',
    ]);
    expect(tokenize("I don't know")).toEqual(['know']);
    expect(tokenize('Café MÜNCHEN')).toEqual(['café', 'münchen']);
    expect(tokenize('東京tower')).toEqual(['東', '京', 'tower']);
    expect(STOPWORDS.has('the')).toBe(true);
  });

  it('folds a singular and its plural onto one term', () => {
    const pairs = [
      ['bus', 'buses'],
      ['box', 'boxes'],
      ['church', 'churches'],
      ['city', 'cities'],
      ['glass', 'glasses'],
      ['dish', 'dishes'],
      ['wish', 'wishes'],
      ['party', 'parties'],
      ['photo', 'photos'],
      ['day', 'days'],
      ['gas', 'gases'],
      ['status', 'statuses'],
      ['lens', 'lenses'],
      ['bias', 'biases'],
      ['house', 'houses'],
      ['headache', 'headaches'],
      ['size', 'sizes'],
      ['movie', 'movies'],
      ['cookie', 'cookies'],
      ['tie', 'ties'],
      ['potato', 'potatoes'],
      ['hero', 'heroes'],
      ['shoe', 'shoes'],
      ['axe', 'axes'],
      ['use', 'uses'],
      ['fly', 'flies'],
    ];
    for (const [singular, plural] of pairs) {
      expect([plural, tokenize(plural!)], plural).toEqual([plural, tokenize(singular!)]);
      expect(tokenize(singular!)).toHaveLength(1);
    }
    // Exact terms (the postings of every backend hold them; changing one is a TOKENIZER_VERSION bump).
    expect(['buses', 'cities', 'glasses', 'churches', 'houses', 'movies'].map(stem)).toEqual([
      'bus',
      'city',
      'glass',
      'church',
      'hous',
      'movy',
    ]);
  });

  it('keeps invariant words, stopwords and short words, and does not merge unrelated words', () => {
    for (const word of ['news', 'series', 'species', 'always', 'perhaps']) {
      expect(INVARIANT_WORDS.has(word)).toBe(true);
      expect(tokenize(word)).toEqual([word]);
    }
    expect(tokenize('news')).not.toEqual(tokenize('new'));
    expect(tokenize('is this was')).toEqual([]);
    expect(tokenize('gas bus us')).toEqual(['gas', 'bus', 'us']);
    expect(stem('glass')).toBe('glass');
    expect(stem('status')).toBe('status');
    expect(stem('chess')).toBe('chess');
    // -f/-fe plurals are left alone: folding "-ves" would merge life with live and leaf with leave.
    expect(tokenize('life')).not.toEqual(tokenize('live'));
    expect(tokenize('leaf')).not.toEqual(tokenize('leave'));
    expect(tokenize('knife')).not.toEqual(tokenize('knives'));
    // Non-letters are never stemmed; nor are non-English words without an English plural ending.
    expect(stem('2024s')).toBe('2024s');
    expect(tokenize('münchen')).toEqual(['münchen']);
  });

  it('gives the tokens of the regex rule on ASCII text (the char-code scan) and on any text', () => {
    // The rule as regexes (before the ASCII scan): lowercase, inner apostrophes dropped, [a-z0-9] runs, and
    // stem only on letter-only tokens.
    const reference = (text: string): string[] =>
      (/^[\x00-\x7f]*$/.test(text) ? text : text.normalize('NFKC'))
        .toLowerCase()
        .replace(/(\p{L})['\u2019](\p{L})/gu, '$1$2')
        .match(/[\p{L}\p{M}\p{N}]+/gu)
        ?.flatMap((word) =>
          /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word)
            ? tokenize(word)
            : STOPWORDS.has(word)
              ? []
              : [word.length >= 4 && /^\p{L}+$/u.test(word) ? stem(word) : word],
        ) ?? [];
    const ascii = fc.string({ unit: fc.constantFrom(..."abcSXYZ0129 '’-.es".split('')), maxLength: 40 });
    const same = (text: string): void => {
      expect(tokenize(text)).toEqual(reference(text));
    };
    fc.assert(fc.property(ascii, same), { numRuns: 500 });
    fc.assert(fc.property(fc.string(), same));
    for (const text of ["rock'n'roll o'neil a'b'c x''y 4x4s abc1s test's", 'Straße MASSES ÜBER ﬁles é1s']) {
      same(text);
    }
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

  it('matches plural forms: "bus" finds "buses", scored by hand', () => {
    // Terms after folding: a = [bus, downtown] (len 2), b = [bus] (len 1), c = [box, box, church] (len 3);
    // N = 3, average length 2, k1 = 1.2, b = 0.75.
    // bus: df 2, idf = ln(1 + 1.5/2.5) = 0.4700036292;
    //   view b: tf 1, len 1 -> 2.2 / (1 + 1.2 * 0.625) = 1.2571428571 -> 0.5908617053;
    //   view a: tf 1, len 2 -> 2.2 / (1 + 1.2 * 1) = 1 -> 0.4700036292.
    // box: df 1, idf = ln(1 + 2.5/1.5) = 0.9808292530; view c: tf 2, len 3 -> 1.2054794521 -> 1.1823695105.
    // church: df 1; view c: tf 1, len 3 -> 2.2 / (1 + 1.2 * 1.375) = 0.8301886792 -> 0.8142733421.
    const index = Bm25Index.build([
      { memoryId: 'a', kind: 'text', key: 'main', text: 'Buses downtown' },
      { memoryId: 'b', kind: 'text', key: 'main', text: 'the bus' },
      { memoryId: 'c', kind: 'text', key: 'main', text: 'boxes, a box; churches' },
    ]);
    for (const query of ['bus', 'buses', 'BUSES?']) {
      expect(index.search(query, { limit: 5 }).map((h) => [h.memoryId, h.rawScore])).toEqual([
        ['b', expect.closeTo(0.5908617053374963, 12)],
        ['a', expect.closeTo(0.47000362924573563, 12)],
      ]);
    }
    expect(index.search('box', { limit: 5 }).map((h) => [h.memoryId, h.rawScore])).toEqual([
      ['c', expect.closeTo(1.1823695104798895, 12)],
    ]);
    expect(index.search('church', { limit: 5 }).map((h) => [h.memoryId, h.rawScore])).toEqual([
      ['c', expect.closeTo(0.8142733421229428, 12)],
    ]);
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
