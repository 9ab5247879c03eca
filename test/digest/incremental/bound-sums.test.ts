import { describe, expect, it } from 'vitest';
import { BoundSums, hashOf, SlotTable } from '../../../src/digest/incremental/bound-sums.ts';
import { mulberry32 } from '../../../src/digest/semantic/seeded-random.ts';
import type { SemanticPosting } from '../../../src/store/semantic-index-spec.ts';

/**
 * BoundSums keeps a forward search's partial sums across its rounds (each round extends some terms'
 * prefixes): every round's view must be the one computed from scratch on the same prefixes, including
 * when a prefix is replaced by one that does not extend it (the sums then restart).
 */
describe('BoundSums', () => {
  it('gives the same bounds round after round as a fresh computation on the same prefixes', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = mulberry32(seed);
      const terms = ['a', 'b', 'c', 'd'].map((term) => ({ term, weight: 0.1 + random() }));
      const lists = new Map(
        terms.map(({ term }) => [
          term,
          Array.from(
            { length: 30 },
            (_, i): SemanticPosting => ({ memoryId: `m${Math.floor(random() * 40)}-${i}`, weight: random() }),
          ).sort((x, y) => y.weight - x.weight),
        ]),
      );
      // The query itself appears in some lists (it is skipped).
      lists.get('a')!.splice(3, 0, { memoryId: 'self', weight: lists.get('a')![3]!.weight });
      const lengths = new Map(terms.map(({ term }) => [term, 2]));
      const caps = new Map<string, number>();
      const prefixes = new Map<string, readonly SemanticPosting[]>();
      const kept = new BoundSums(terms, 'self');
      for (let round = 0; round < 6; round++) {
        for (const { term } of terms) {
          if (round > 0 && random() < 0.5)
            lengths.set(term, Math.min(31, lengths.get(term)! + Math.floor(random() * 8)));
          const rows = lists.get(term)!.slice(0, lengths.get(term)!);
          // Unchanged prefixes are handed out again as the same array (as exactTopK does).
          if (prefixes.get(term)?.length !== rows.length) prefixes.set(term, rows);
          caps.set(term, rows.length === lists.get(term)!.length ? 0 : rows.at(-1)!.weight);
        }
        if (round === 4) {
          // A replacement that is not an extension (other documents): the sums restart.
          prefixes.set('b', lists.get('c')!.slice(0, prefixes.get('b')!.length + 1));
        }
        kept.update(prefixes);
        const fresh = new BoundSums(terms, 'self');
        fresh.update(prefixes);
        const capOf = (term: string) => caps.get(term)!;
        const exact = new Map([['m1-0', 0.5]]);
        const mine = kept.view(capOf, new Map(exact), 3, 1e-8);
        const theirs = fresh.view(capOf, new Map(exact), 3, 1e-8);
        expect(mine.theta).toBeCloseTo(theirs.theta, 12);
        const minePending = mine.pending();
        const theirPending = theirs.pending();
        expect(mine.pendingCount).toBe(minePending.length);
        expect(minePending.map((p) => p.id).sort()).toEqual(theirPending.map((p) => p.id).sort());
        const upper = new Map(theirPending.map((p) => [p.id, p.upper]));
        for (const p of minePending) expect(p.upper).toBeCloseTo(upper.get(p.id)!, 12);
        expect(minePending.some((p) => p.id === 'self')).toBe(false);
      }
    }
  });

  it('refuses a pending list asked for after the sums changed (it would mix two rounds)', () => {
    const terms = [{ term: 'a', weight: 1 }];
    const sums = new BoundSums(terms, 'self');
    const first: SemanticPosting[] = [{ memoryId: 'x', weight: 0.9 }];
    sums.update(new Map([['a', first]]));
    const view = sums.view(() => 0.5, new Map(), 1, 1e-8);
    expect(view.pending().map((p) => p.id)).toEqual(['x']);
    sums.update(new Map([['a', [...first, { memoryId: 'y', weight: 0.8 }]]]));
    expect(() => view.pending()).toThrow(/after the sums changed/);
    const later = sums.view(() => 0.5, new Map(), 1, 1e-8);
    expect(() => view.pending()).toThrow(/after the sums changed/);
    expect(later.pendingCount).toBe(later.pending().length);
  });
});

/**
 * The id -> slot table of a search: exact like a Map (a hash collision never merges two ids, a lookup of an
 * id never added finds nothing), through its growth.
 */
describe('SlotTable', () => {
  const ids = (count: number, seed: number) => {
    const random = mulberry32(seed);
    return Array.from({ length: count }, () => {
      const n = Math.floor(random() * (count / 2));
      // Long, short, non-ASCII and empty ids.
      return n % 7 === 0 ? `mémoire-${n}-${'x'.repeat(n % 40)}` : n % 11 === 0 ? '' : `m${n}`;
    });
  };
  const agreesWithMap = (table: SlotTable, slots: string[], input: readonly string[]) => {
    const reference = new Map<string, number>();
    for (const id of input) {
      const expected = reference.get(id) ?? reference.size;
      reference.set(id, expected);
      expect(table.slotOf(id)).toBe(expected);
    }
    expect(slots).toEqual([...reference.keys()]);
    for (const [id, slot] of reference) expect(table.find(id)).toBe(slot);
    expect(table.find('never-added')).toBeUndefined();
  };

  it('gives each id one slot, in order of first sight, through growth', () => {
    for (const seed of [1, 2, 3]) {
      const slots: string[] = [];
      agreesWithMap(new SlotTable(slots), slots, ids(6000, seed));
      expect(slots.length).toBeGreaterThan(1024);
    }
  });

  it('keeps ids apart when every hash collides', () => {
    const slots: string[] = [];
    agreesWithMap(new SlotTable(slots, () => 12345), slots, ids(1500, 9));
  });

  it('hashes ids that differ in one unit apart', () => {
    const hashes = new Set(['m1', 'm2', 'n1', '1m', 'm10', 'm01'].map((id) => hashOf(id)));
    expect(hashes.size).toBe(6);
  });

  it("spreads ids a client chose to collide under a known seed (the process's seed is its own)", () => {
    // 40 ids sharing one index of a 1,024-entry table under seed 0, found by brute force as an attacker would.
    const index = (id: string, seed?: number) => hashOf(id, seed) & 1023;
    const target = index('x0', 0);
    const chosen: string[] = [];
    for (let n = 0; chosen.length < 40; n++) if (index(`x${n}`, 0) === target) chosen.push(`x${n}`);
    expect(new Set(chosen.map((id) => index(id, 0))).size).toBe(1);
    expect(new Set(chosen.map((id) => index(id))).size).toBeGreaterThan(20);
    // Within the process the hash is a function of the id.
    expect(chosen.map((id) => hashOf(id))).toEqual(chosen.map((id) => hashOf(id)));
  });
});
