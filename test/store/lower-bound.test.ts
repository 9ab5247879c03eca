import { describe, expect, it } from 'vitest';
import { lowerBound } from '../../src/store/lower-bound.ts';

describe('lowerBound', () => {
  const numbers = (a: number, b: number) => a - b;
  it('gives the first position not before the value, for present, absent and equal runs', () => {
    expect(lowerBound([], 3, numbers)).toBe(0);
    expect(lowerBound([1, 3, 3, 3, 7], 3, numbers)).toBe(1);
    expect(lowerBound([1, 3, 3, 3, 7], 4, numbers)).toBe(4);
    expect(lowerBound([1, 3, 7], 0, numbers)).toBe(0);
    expect(lowerBound([1, 3, 7], 9, numbers)).toBe(3);
  });
  it('follows the comparator, e.g. weight descending', () => {
    const desc = (a: number, b: number) => b - a;
    expect(lowerBound([9, 5, 5, 1], 5, desc)).toBe(1);
    expect(lowerBound([9, 5, 5, 1], 4, desc)).toBe(3);
  });
});
