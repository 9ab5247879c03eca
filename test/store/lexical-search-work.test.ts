import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { CandidateOrder } from '../../src/store/lexical-accumulators.ts';
import { forwardWords } from '../../src/store/lexical-forward-lists.ts';
import { type CachedDocument, DocumentCache } from '../../src/store/lexical-search-cache.ts';
import { lexicalSearchWork } from '../../src/store/search-lexical-index.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * What keeps a warm common-term question from growing with the archive (issue #10, docs/living-archive.md
 * "A question"): the passes over the search's accumulators are amortised over the rows read (not one per
 * postings page), and the document cache evicts in batches. Results stay exactly those of a fresh Bm25Index.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexwork-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lexical search work (SQLite)', () => {
  it('passes over the accumulators are fewer than the pages read, results exact', async () => {
    const store = createSqliteStore(join(dir, 'common.db'));
    const random = mulberry32(3);
    const rare = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}`);
    // Common words in most texts with varied tf and lengths: long impact-ordered lists, many tied scores.
    const texts = Array.from({ length: 4000 }, () => {
      const words: string[] = [];
      const length = 3 + Math.floor(random() * 20);
      for (let w = 0; w < length; w++) {
        const roll = random();
        words.push(
          roll < 0.3
            ? 'alpha'
            : roll < 0.5
              ? 'beta'
              : roll < 0.6
                ? 'gamma'
                : rare[Math.floor(random() * 400)]!,
        );
      }
      return words.join(' ');
    });
    const ids = texts.map((_, i) => `m${i}`);
    for (let from = 0; from < texts.length; from += 500) {
      await store.writeMemories(
        'ctx',
        texts.slice(from, from + 500).map((text, i) => write('ctx', ids[from + i]!, text, from + i)),
      );
    }
    const reference = Bm25Index.build(
      texts.flatMap((text, i) => [
        { memoryId: ids[i]!, kind: 'text' as const, key: 'main', text },
        { memoryId: ids[i]!, kind: 'metadata' as const, key: 'main', text: `meta ${ids[i]}` },
      ]),
    );
    const before = { ...lexicalSearchWork };
    for (const query of ['alpha beta gamma', 'alpha alpha beta', 'gamma beta', `alpha ${rare[7]}`]) {
      for (const limit of [10, 48]) {
        const got = await store.searchLexical('ctx', query, { limit, kinds: ['text'] });
        const expected = reference.search(query, { limit, kinds: ['text'] });
        expect(
          got.map((h) => h.memoryId),
          query,
        ).toEqual(expected.map((h) => h.memoryId));
        got.forEach((hit, i) => {
          expect(Math.abs(hit.rawScore - expected[i]!.rawScore), query).toBeLessThanOrEqual(1e-9);
        });
      }
    }
    const pages = lexicalSearchWork.pages - before.pages;
    const passes = lexicalSearchWork.passes - before.passes;
    // One pass per page before: the common-term searches here read hundreds of pages.
    expect(pages).toBeGreaterThan(200);
    expect(passes).toBeLessThan(pages / 2);
    // Candidates are scored best ceiling first and the rest dropped once none can rank (exact hits above).
    const candidates = lexicalSearchWork.candidates - before.candidates;
    const scored = lexicalSearchWork.scored - before.scored;
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(candidates * 0.75);
    await store.close();
  }, 60_000);
});

describe('lexical search work bounds (SQLite)', () => {
  it('a tied common word: bounded, the same hits cold and warm, counted; a smaller bound reads less', async () => {
    const file = join(dir, 'ties.db');
    const store = createSqliteStore(file);
    // 3,000 views holding "common" once at one of three lengths: three classes of exactly tied scores.
    const writes = Array.from({ length: 3000 }, (_, i) =>
      write(
        'ctx',
        `m${String((i * 7919) % 3000).padStart(4, '0')}`,
        ['common', 'x', 'y'].slice(0, 1 + (i % 3)).join(' '),
        i,
      ),
    );
    for (let from = 0; from < writes.length; from += 500)
      await store.writeMemories('ctx', writes.slice(from, from + 500));
    await store.close();
    const search = async (work?: { rows?: number; scored?: number }) => {
      const reader = createSqliteStore(file);
      const kinds: string[] = [];
      const before = { ...lexicalSearchWork };
      const cold = await reader.searchLexical('ctx', 'common', {
        limit: 10,
        kinds: ['text'],
        ...(work ? { work } : {}),
        onBounded: (kind) => kinds.push(kind),
      });
      const counted = {
        rows: lexicalSearchWork.rows - before.rows,
        scored: lexicalSearchWork.scored - before.scored,
        bounded: lexicalSearchWork.bounded - before.bounded,
      };
      // Warm: every document the cold search read is cached now; the bounded search must not change.
      const warm = await reader.searchLexical('ctx', 'common', {
        limit: 10,
        kinds: ['text'],
        ...(work ? { work } : {}),
      });
      await reader.close();
      return { cold, warm, kinds, counted };
    };
    const exact = await search();
    // The 1,000 shortest views tie; the exact top 10 are their 10 smallest memory ids.
    const shortest = writes
      .filter((_, i) => i % 3 === 0)
      .map((w) => w.record.id)
      .sort();
    expect(exact.cold.map((h) => h.memoryId)).toEqual(shortest.slice(0, 10));
    expect(exact.kinds).toEqual([]);
    expect(exact.counted.scored).toBeGreaterThanOrEqual(1000);
    const bounded = await search({ scored: 100 });
    expect(bounded.kinds).toEqual(['text']);
    expect(bounded.counted).toMatchObject({ scored: 100, bounded: 1 });
    expect(bounded.warm).toEqual(bounded.cold);
    // The shortest views have the highest ceiling; equal ceilings are scored earliest-written view first:
    // the first 100 shortest in write order, of which the 10 smallest memory ids rank.
    const firstHundred = writes
      .filter((_, i) => i % 3 === 0)
      .slice(0, 100)
      .map((w) => w.record.id)
      .sort();
    expect(firstHundred.slice(0, 10)).not.toEqual(shortest.slice(0, 10));
    expect(bounded.cold.map((h) => h.memoryId)).toEqual(firstHundred.slice(0, 10));
    const fewRows = await search({ rows: 500 });
    expect(fewRows.kinds).toEqual(['text']);
    expect(fewRows.counted.rows).toBe(500);
    expect(fewRows.warm).toEqual(fewRows.cold);
  }, 60_000);
});

describe('CandidateOrder', () => {
  it('hands candidates out by ceiling, highest first, past its initial capacity', () => {
    const random = mulberry32(5);
    for (const n of [0, 1, 7, 3000]) {
      const order = CandidateOrder.fresh();
      const added = Array.from({ length: n }, (_, i) => ({
        doc: i * 3,
        high: Math.floor(random() * 50) / 7,
      }));
      for (const { doc, high } of added) order.add(doc, high);
      order.heapify();
      const got: { doc: number; high: number }[] = [];
      while (order.size > 0) {
        const high = order.topHigh;
        got.push({ doc: order.take(), high });
      }
      // Ceilings descend; equal ceilings lowest id first (what a search stopped by its bound scores).
      for (let i = 1; i < n; i++) {
        expect(got[i - 1]!.high).toBeGreaterThanOrEqual(got[i]!.high);
        if (got[i - 1]!.high === got[i]!.high) expect(got[i - 1]!.doc).toBeLessThan(got[i]!.doc);
      }
      const byDoc = (x: { doc: number }, y: { doc: number }) => x.doc - y.doc;
      expect([...got].sort(byDoc)).toEqual([...added].sort(byDoc));
    }
  });
});

describe('forwardWords', () => {
  it('reads a forward blob as little-endian u32 words, aligned (a view) or not (a copy)', () => {
    const values = [7, 3, 70000, 0xfffffffe];
    const blob = Buffer.alloc(17);
    for (const [i, v] of values.entries()) blob.writeUInt32LE(v, 1 + 4 * i);
    expect([...forwardWords(blob.subarray(1))]).toEqual(values);
    // Buffer.alloc does not take from the shared pool: its own buffer, offset 0 (as the driver's blobs).
    const aligned = Buffer.alloc(16);
    blob.copy(aligned, 0, 1);
    const words = forwardWords(aligned);
    expect([...words]).toEqual(values);
    expect(words.buffer).toBe(aligned.buffer);
  });
});

describe('DocumentCache', () => {
  const doc = (i: number): CachedDocument => ({
    memoryId: `m${String(i).padStart(6, '0')}`,
    key: 'main',
    terms: new Uint32Array(16),
  });
  // 64 bytes of terms + 2 * (memory id + key characters) + 64: 150 bytes an entry (what size() counts).
  const entryBytes = 64 + 2 * (7 + 4) + 64;

  it('stays within its budget, drops the least recently used first, evicts in batches', () => {
    const cache = new DocumentCache(entryBytes * 100);
    for (let i = 0; i < 100; i++) cache.set(i, doc(i));
    expect(cache.size).toBe(100);
    cache.get(0);
    cache.set(100, doc(100));
    // Over budget: one batch down to 7/8 of it, the least recently used first (0 was read: it stays).
    expect(cache.size).toBeLessThanOrEqual(88);
    expect(cache.size).toBeGreaterThanOrEqual(80);
    expect(cache.get(0)).toBeDefined();
    expect(cache.get(100)).toBeDefined();
    expect(cache.get(1)).toBeUndefined();
    // The next sets fit without another eviction: no per-set walk.
    const size = cache.size;
    for (let i = 101; i < 101 + (100 - size); i++) cache.set(i, doc(i));
    expect(cache.size).toBe(100);
    for (let i = 0; i < 20_000; i++) cache.set(1000 + i, doc(1000 + i));
    expect(cache.size).toBeLessThanOrEqual(100);
    expect(cache.get(1000 + 19_999)).toBeDefined();
  });
});
