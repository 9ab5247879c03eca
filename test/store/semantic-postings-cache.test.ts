import { describe, expect, it } from 'vitest';
import type { SemanticPosting } from '../../src/store/semantic-index-spec.ts';
import { SemanticPostingsCache } from '../../src/store/semantic-postings-cache.ts';

const rows = (term: string, n: number): SemanticPosting[] =>
  Array.from({ length: n }, (_, i) => ({ memoryId: `${term}${i}`, weight: 1 - i / (n + 1) }));
/** The cache's byte estimate of a list (semantic-postings-cache.ts: 64 + 48 + 2 bytes per id character). */
const bytesOf = (list: readonly SemanticPosting[]): number =>
  64 + list.reduce((sum, p) => sum + 48 + 2 * p.memoryId.length, 0);

/**
 * The kept `{ top: n }` posting reads (semantic-postings-cache.ts): a full cache evicts the least recently
 * used lists, not every list (at 1M the common terms of consecutive adds do not all fit).
 */
describe('SemanticPostingsCache', () => {
  it('evicts the least recently used lists when full and keeps the rest', () => {
    // Room for three of the four lists (all four have the same estimate: ids of the same lengths).
    const cache = new SemanticPostingsCache(3 * bytesOf(rows('a', 300)) + 100);
    cache.set('ctx', 'a', 256, rows('a', 300));
    cache.set('ctx', 'b', 256, rows('b', 300));
    cache.set('ctx', 'c', 256, rows('c', 300));
    expect(cache.get('ctx', 'a', 256)).toEqual(rows('a', 300));
    // A fourth list passes the budget: b (least recently used) goes, a (just read) and c stay.
    cache.set('ctx', 'd', 256, rows('d', 300));
    expect(cache.get('ctx', 'b', 256)).toBeUndefined();
    expect(cache.get('ctx', 'a', 256)).toEqual(rows('a', 300));
    expect(cache.get('ctx', 'c', 256)).toEqual(rows('c', 300));
    expect(cache.get('ctx', 'd', 256)).toEqual(rows('d', 300));
    expect(cache.postings).toBe(900);
    // Setting a list again replaces it (no double count); a list larger than the cache is not kept.
    cache.set('ctx', 'd', 256, rows('d', 300));
    expect(cache.postings).toBe(900);
    cache.set('ctx', 'e', 256, rows('e', 1200));
    expect(cache.get('ctx', 'e', 256)).toBeUndefined();
    expect(cache.postings).toBe(900);
  });

  it('keeps a written document in its terms lists, drops a list on a weight tie, and forgets contexts', () => {
    const cache = new SemanticPostingsCache(1 << 20);
    cache.set('ctx', 'a', 256, rows('a', 256));
    cache.set('ctx', 'b', 256, rows('b', 10));
    cache.set('other', 'a', 256, rows('a', 5));
    cache.inserted('ctx', 'new', ['a', 'b'], [2, rows('b', 10)[3]!.weight]);
    const a = cache.get('ctx', 'a', 256)!;
    expect(a[0]).toEqual({ memoryId: 'new', weight: 2 });
    expect(a).toHaveLength(256);
    expect(cache.get('ctx', 'b', 256)).toBeUndefined();
    expect(cache.postings).toBe(256 + 5);
    // A shorter top read is the kept list's prefix; nothing for a longer one or another term.
    expect(cache.prefix('ctx', 'a', 32)).toEqual(a.slice(0, 32));
    expect(cache.prefix('ctx', 'a', 300)).toBeUndefined();
    expect(cache.prefix('ctx', 'c', 32)).toBeUndefined();
    expect([cache.keeps('ctx', 'a'), cache.keeps('ctx', 'c'), cache.keeps('nope', 'a')]).toEqual([
      true,
      false,
      false,
    ]);
    cache.clearContext('ctx');
    expect(cache.get('ctx', 'a', 256)).toBeUndefined();
    expect(cache.get('other', 'a', 256)).toEqual(rows('a', 5));
    expect(cache.postings).toBe(5);
    cache.validate(1);
    cache.validate(2);
    expect(cache.get('other', 'a', 256)).toBeUndefined();
    expect(cache.postings).toBe(0);
  });
});
