import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { compactRelations } from '../../src/digest/update-relations.ts';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { createSqliteStore } from '../../src/store/sqlite-store.ts';
import { write } from './store-conformance.ts';

/**
 * SqliteStore.optimizeLexicalIndex merges the FTS5 postings into one segment after a context's bulk write or
 * compaction (fewer b-trees per doclist read) when that context is at least half of the index, and changes
 * no search result: the same hits as before and as a fresh Bm25Index, for this connection and another one.
 */
const dir = mkdtempSync(join(tmpdir(), 'graphmemix-lexmerge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = ['apple', 'pear', 'plum', 'fig', 'kiwi', 'lime', 'date', 'yuzu'];
const textOf = (i: number) =>
  `${WORDS[i % 8]} ${WORDS[(i * 3) % 8]} note ${i} ${i % 5 === 0 ? 'harbour' : 'market'} ${WORDS[(i * 5) % 7]}`;
const QUERIES = ['apple harbour', 'pear plum market', 'note fig', 'kiwi kiwi lime yuzu', 'date 7'];

type Store = ReturnType<typeof createSqliteStore>;

/** Writes `count` memories into `contextId` in transactions of `batch` (each leaves FTS5 segments). */
async function fill(store: Store, contextId: string, count: number, batch: number) {
  for (let from = 0; from < count; from += batch) {
    const ids = Array.from({ length: Math.min(batch, count - from) }, (_, i) => from + i);
    await store.writeMemories(
      contextId,
      ids.map((i) => write(contextId, `${contextId}${i}`, textOf(i), i)),
    );
  }
}

function segments(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(DISTINCT segid) AS n FROM lex_fts_idx').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const search = (store: Store, contextId: string) =>
  Promise.all(QUERIES.map((query) => store.searchLexical(contextId, query, { limit: 10 })));

function fresh(contextId: string, count: number) {
  const index = Bm25Index.build(
    Array.from({ length: count }, (_, i) => [
      { memoryId: `${contextId}${i}`, kind: 'text' as const, key: 'main', text: textOf(i) },
      { memoryId: `${contextId}${i}`, kind: 'metadata' as const, key: 'main', text: `meta ${contextId}${i}` },
    ]).flat(),
  );
  return QUERIES.map((query) => index.search(query, { limit: 10 }));
}

describe('lexical segment merge (SQLite)', () => {
  it('merges a bulk-written context into one segment and answers the same', async () => {
    const file = join(dir, 'merge.db');
    const store = createSqliteStore(file);
    const other = createSqliteStore(file);
    await fill(store, 'a', 600, 20);
    const before = await search(store, 'a');
    expect(await search(other, 'a')).toEqual(before);
    expect(before).toEqual(fresh('a', 600));
    expect(segments(file)).toBeGreaterThan(1);

    expect(await store.optimizeLexicalIndex!('a')).toBe(true);
    expect(segments(file)).toBe(1);
    expect(await search(store, 'a')).toEqual(before);
    expect(await search(other, 'a')).toEqual(before);

    // A context under half of the index is left alone (the merge would rewrite every context's postings).
    await fill(store, 'b', 100, 20);
    expect(await store.optimizeLexicalIndex!('b')).toBe(false);
    expect(segments(file)).toBeGreaterThan(1);
    expect(await search(store, 'b')).toEqual(fresh('b', 100));
    expect(await store.optimizeLexicalIndex!('nobody')).toBe(false);
    await store.close();
    await other.close();

    const reader = createSqliteStore(file, { readonly: true });
    expect(await reader.optimizeLexicalIndex!('a')).toBe(false);
    await reader.close();
  });

  it('runs after a compaction', async () => {
    const file = join(dir, 'compact.db');
    const store = createSqliteStore(file);
    await fill(store, 'c', 300, 30);
    const before = await search(store, 'c');
    expect(segments(file)).toBeGreaterThan(1);
    await compactRelations(store, 'c');
    expect(segments(file)).toBe(1);
    expect(await search(store, 'c')).toEqual(before);
    await store.close();
  });
});
