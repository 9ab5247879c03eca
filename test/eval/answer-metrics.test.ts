import { describe, expect, it } from 'vitest';
import { exactMatch, normalizeAnswer, tokenF1 } from '../../src/eval/answer-metrics.ts';

describe('answer metrics', () => {
  it('normalises case, punctuation and articles', () => {
    expect(normalizeAnswer('The  Café, on Main-Street!')).toBe('cafe on main street');
  });
  it('exact match against any accepted answer, never for empty predictions', () => {
    expect(exactMatch('May 7', ['may 7.', 'the 7th of May'])).toBe(1);
    expect(exactMatch('May 2', ['May 7'])).toBe(0);
    expect(exactMatch('  ', [''])).toBe(0);
  });
  it('token F1 takes the best reference', () => {
    expect(tokenF1('deadline is May 7', ['May 7'])).toBeCloseTo((2 * 0.5 * 1) / 1.5, 12);
    expect(tokenF1('nothing', ['May 7', 'something else'])).toBe(0);
    expect(tokenF1('may 7', ['x', 'May 7'])).toBe(1);
  });
});
