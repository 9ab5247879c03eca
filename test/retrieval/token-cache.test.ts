import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import {
  sharedTerms,
  startTermBatch,
  termCount,
  termId,
  termVectorCached,
  tokenizeCached,
} from '../../src/retrieval/token-cache.ts';
import { tokenize } from '../../src/retrieval/tokenize.ts';

/**
 * Term vectors (src/retrieval/token-cache.ts): a text's distinct terms as dictionary ids with counts, made once
 * per text, must say exactly what its tokens say: counts, length, and the distinct terms two texts share.
 */
const WORDS = 'kayak lake boats boat pier nine saturday booking trip trips ticket 2024 17 june the a'.split(
  ' ',
);

function randomText(random: () => number): string {
  const length = Math.floor(random() * 18);
  return Array.from({ length }, () => WORDS[Math.floor(random() * WORDS.length)]!).join(' ');
}

describe('term vectors', () => {
  it('count every term as the tokens do, and share what the token sets share', () => {
    const random = mulberry32(9);
    const texts = Array.from({ length: 60 }, () => randomText(random));
    startTermBatch();
    for (const text of texts) {
      const tokens = tokenize(text);
      const vector = termVectorCached(text);
      expect(vector.length).toBe(tokens.length);
      expect(vector.ids.length).toBe(new Set(tokens).size);
      expect([...vector.ids]).toEqual([...vector.ids].sort((x, y) => x - y));
      for (const term of [...new Set([...tokens, 'absentword'])]) {
        expect(termCount(vector, termId(term)), `${term} in "${text}"`).toBe(
          tokens.filter((t) => t === term).length,
        );
      }
    }
    for (let i = 0; i + 1 < texts.length; i++) {
      const x = new Set(tokenize(texts[i]!));
      const y = new Set(tokenize(texts[i + 1]!));
      expect(sharedTerms(termVectorCached(texts[i]!), termVectorCached(texts[i + 1]!))).toBe(
        [...x].filter((t) => y.has(t)).length,
      );
    }
  });

  it('is made once per text, and anew after the dictionary starts over', () => {
    const text = 'the kayak trip from the lake pier, kayak booked';
    startTermBatch();
    const first = termVectorCached(text);
    expect(termVectorCached(text)).toBe(first);
    expect(tokenizeCached(text)).toEqual(tokenize(text));
    // Fill the dictionary past its bound: the next batch starts a new one, and vectors follow it.
    for (let i = 0; i < 1 << 18; i++) termId(`filler${i}`);
    startTermBatch();
    expect(termId('filler7')).toBeLessThan(2);
    const again = termVectorCached(text);
    expect(again).not.toBe(first);
    expect(termCount(again, termId('kayak'))).toBe(2);
    expect(termCount(again, termId('lake'))).toBe(1);
    expect(termCount(again, termId('filler9'))).toBe(0);
    expect(again.length).toBe(first.length);
  });
});
