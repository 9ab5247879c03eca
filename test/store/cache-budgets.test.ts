import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { POSTINGS_CACHE_BUDGET, PostingsCache } from '../../src/store/lexical-search-cache.ts';
import type { SemanticPosting } from '../../src/store/semantic-index-spec.ts';
import {
  CACHED_TOP_MIN,
  SEMANTIC_POSTINGS_CACHE_BYTES,
  SemanticPostingsCache,
} from '../../src/store/semantic-postings-cache.ts';
import { LEXICAL_SCHEMA_SQL, SqliteLexicalIndex } from '../../src/store/sqlite-lexical-index.ts';

// The per-connection caches are bounded by estimated bytes, not by entry counts (issue #10: peak RSS).
describe('cache byte budgets', () => {
  it('documents budgets of a few MiB', () => {
    expect(POSTINGS_CACHE_BUDGET.pages + POSTINGS_CACHE_BUDGET.stats + POSTINGS_CACHE_BUDGET.fields).toBe(
      17 << 20,
    );
    expect(SEMANTIC_POSTINGS_CACHE_BYTES).toBe(40 << 20);
  });

  it('PostingsCache drops a part whole when an entry would take it past its budget', () => {
    const cache = new PostingsCache({ pages: 10_000, stats: 2_000, fields: 1_000 });
    cache.validate(1);
    let reads = 0;
    const page = (token: string) =>
      cache.page(token, 0, 500, () => {
        reads++;
        return Array.from({ length: 500 }, (_, i) => i);
      });
    // ~4 KB per page: two fit, the third drops both.
    page('a');
    page('b');
    expect(reads).toBe(2);
    page('a');
    expect(reads).toBe(2);
    expect(cache.held.pages).toBeLessThanOrEqual(10_000);
    page('c');
    expect(cache.held.pages).toBeLessThanOrEqual(10_000);
    page('a');
    expect(reads).toBe(4);

    // Statistics: an entry with many buckets weighs more than one with few.
    const buckets = (n: number) => Array.from({ length: n }, (_, bucket) => ({ bucket, docs: 1 }));
    let statReads = 0;
    const stats = (terms: number[], n: number) =>
      cache.termStats(1, terms, (missing) => {
        statReads += missing.length;
        return new Map(missing.map((term) => [term, buckets(n)]));
      });
    stats([1, 2], 10);
    stats([1, 2], 10);
    expect(statReads).toBe(2);
    stats([3], 40);
    expect(cache.held.stats).toBeLessThanOrEqual(2_000);
    stats([1], 10);
    expect(statReads).toBe(4);
  });

  it('SemanticPostingsCache keeps its estimated bytes within the budget, insertions included', () => {
    const rows = (prefix: string, n: number): SemanticPosting[] =>
      Array.from({ length: n }, (_, i) => ({ memoryId: `${prefix}${i}`, weight: 1 - i / (n + 1) }));
    const top = CACHED_TOP_MIN;
    const one = rows('m', top);
    const listBytes = 64 + one.reduce((sum, p) => sum + 48 + 2 * p.memoryId.length, 0);
    const cache = new SemanticPostingsCache(Math.floor(listBytes * 2.5));
    cache.validate(1);
    cache.set('ctx', 'a', top, one);
    cache.set('ctx', 'b', top, rows('m', top));
    expect(cache.held).toBe(2 * listBytes);
    expect(cache.get('ctx', 'a', top)).toHaveLength(top);
    // A posting that enters a full list replaces its last one: the estimate follows both.
    cache.inserted('ctx', 'new-memory-with-a-long-id', ['a'], [2]);
    expect(cache.held).toBe(2 * listBytes + 2 * ('new-memory-with-a-long-id'.length - `m${top - 1}`.length));
    expect(cache.get('ctx', 'a', top)![0]!.memoryId).toBe('new-memory-with-a-long-id');
    // A third list would pass the budget: the least recently used list (b; a was read since) goes first.
    const a = cache.get('ctx', 'a', top)!;
    cache.set('ctx', 'c', top, rows('m', top));
    expect(cache.get('ctx', 'b', top)).toBeUndefined();
    expect(cache.get('ctx', 'a', top)).toEqual(a);
    expect(cache.get('ctx', 'c', top)).toHaveLength(top);
    expect(cache.held).toBe(2 * listBytes + 2 * ('new-memory-with-a-long-id'.length - `m${top - 1}`.length));
  });
});

describe('SQLite lexical index term ids', () => {
  it('are learnt within the byte budget and dropped whole past it; searches stay exact', () => {
    const db = new Database(':memory:');
    db.exec(LEXICAL_SCHEMA_SQL);
    const budget = 2_000;
    const index = new SqliteLexicalIndex(db, budget);
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
    for (const [at, word] of words.entries()) {
      index.begin();
      index.addViews('ctx', `m${at}`, [
        { memoryId: `m${at}`, kind: 'text', key: 'main', text: `${word} shared` },
      ]);
      index.flush();
      index.commit();
      expect(index.termCacheBytes).toBeGreaterThan(0);
      expect(index.termCacheBytes).toBeLessThanOrEqual(budget);
    }
    // 61 terms of ~80 bytes each do not fit in 2,000 bytes: the cache was dropped, ids are read again.
    expect(index.search('ctx', 'word3', { limit: 5 }).map((hit) => hit.memoryId)).toEqual(['m3']);
    expect(index.search('ctx', 'shared', { limit: 100 })).toHaveLength(60);
    expect(index.termCacheBytes).toBeLessThanOrEqual(budget);
    db.close();
  });
});
