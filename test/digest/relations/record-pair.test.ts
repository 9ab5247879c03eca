import { describe, expect, it } from 'vitest';
import { orderedPair, PairSet } from '../../../src/digest/relations/record-pair.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';

describe('PairSet', () => {
  it('keeps the first-seen order of distinct unordered pairs and answers has() as a set of "a|b" keys does', () => {
    const random = mulberry32(5);
    const ids = Array.from({ length: 30 }, (_, i) => `m${i}`);
    const pick = () => ids[Math.floor(random() * ids.length)]!;
    const set = new PairSet();
    const keys = new Set<string>();
    const expected: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const [x, y] = [pick(), pick()];
      set.add(x, y);
      const [a, b] = orderedPair(x, y);
      if (x !== y && !keys.has(`${a}|${b}`)) {
        keys.add(`${a}|${b}`);
        expected.push(`${a}|${b}`);
      }
    }
    expect(set.pairs.map(([a, b]) => `${a}|${b}`)).toEqual(expected);
    for (const x of ids) {
      for (const y of ids) expect(set.has(x, y)).toBe(keys.has(x < y ? `${x}|${y}` : `${y}|${x}`));
    }
  });
});
