import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/digest/semantic/seeded-random.ts';
import { Bm25Index } from '../../src/retrieval/bm25-index.ts';
import { compareHits } from '../../src/retrieval/top-hits.ts';
import type { MemoryWrite } from '../../src/store/archive-store-spec.ts';
import { postgresLexicalCounters } from '../../src/store/postgres/postgres-lexical-search.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { MemoryView, ViewHit, ViewKind } from '../../src/types/view.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from './postgres-test-db.ts';

/**
 * Top-k pruning of the Postgres lexical search (postgres-lexical-search.ts): on random Zipf data the pruned
 * search returns exactly what the unpruned reference (a fresh Bm25Index over the same views) returns, ids,
 * order and scores (also restricted to random memory subsets); a query with a common term reads fewer postings than the query terms' lists hold; and a
 * database migrated from schema 2 (no impacts) gets them backfilled and searches the same.
 */
afterAll(dropTestDatabases);
if (PG_SKIP) console.warn(`[postgres lexical pruning skipped] ${PG_SKIP}`);

function corpus(seed: number) {
  const random = mulberry32(seed);
  const words = Array.from({ length: 400 }, (_, i) => `q${i.toString(36)}z`);
  const cumulative: number[] = [];
  let sum = 0;
  const total = words.reduce((acc, _, i) => acc + 1 / (i + 1), 0);
  for (let i = 0; i < words.length; i++) {
    sum += 1 / (i + 1) / total;
    cumulative.push(sum);
  }
  const word = () => {
    const r = random();
    const at = cumulative.findIndex((c) => c >= r);
    return words[at < 0 ? words.length - 1 : at]!;
  };
  const text = (min: number, max: number) =>
    Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');
  return { random, word, text };
}

function viewsOf(id: string, c: ReturnType<typeof corpus>, long: boolean): MemoryView[] {
  const views: MemoryView[] = [
    { memoryId: id, kind: 'text', key: 'main', text: long ? c.text(15, 50) : c.text(2, 14) },
    // Short metadata views from a few words: many exact ties (broken by memory id).
    { memoryId: id, kind: 'metadata', key: 'main', text: `${c.word()} ${c.random() < 0.5 ? 'q0z' : 'q1z'}` },
  ];
  if (c.random() < 0.3) views.push({ memoryId: id, kind: 'caption', key: 'a0', text: c.text(1, 6) });
  return views;
}

function writeOf(id: string, views: MemoryView[], version: number): MemoryWrite {
  const record: MemoryRecord = { id, contextId: 'ctx', kind: 'message', sequence: 0, text: id, assets: [] };
  return { record, views, contentHash: `${id}-${version}` };
}

function same(actual: ViewHit[], expected: ViewHit[], label: string): void {
  expect(
    actual.map((h) => `${h.memoryId}/${h.kind}/${h.key}`),
    label,
  ).toEqual(expected.map((h) => `${h.memoryId}/${h.kind}/${h.key}`));
  // Bit-identical: every backend sums bm25TermScore in query-term order.
  expect(
    actual.map((h) => h.rawScore),
    label,
  ).toEqual(expected.map((h) => h.rawScore));
}

/**
 * 1,500 memories in batches, with updates and deletes; with `drift` later views grow longer, so the average
 * length drifts far from the reference length the impacts were computed at (looser bounds, same results).
 */
async function fill(url: string, seed: number, drift: boolean): Promise<Map<string, MemoryView[]>> {
  const c = corpus(seed);
  const model = new Map<string, MemoryView[]>();
  let version = 0;
  const store = await openPostgresStore({ url, maxConnections: 2 });
  try {
    for (let batch = 0; batch < 6; batch++) {
      const writes: MemoryWrite[] = [];
      for (let i = 0; i < 250; i++) {
        const existing = [...model.keys()];
        const id =
          existing.length > 0 && c.random() < 0.1
            ? existing[Math.floor(c.random() * existing.length)]!
            : `m${batch}-${i}`;
        const views = viewsOf(id, c, drift && batch >= 3 && c.random() < 0.6);
        model.set(id, views);
        writes.push(writeOf(id, views, version++));
      }
      await store.writeMemories('ctx', writes);
      for (let d = 0; d < 5; d++) {
        const existing = [...model.keys()];
        const id = existing[Math.floor(c.random() * existing.length)]!;
        await store.deleteMemory('ctx', id);
        model.delete(id);
      }
    }
  } finally {
    await store.close();
  }
  return model;
}

async function expectReference(url: string, model: Map<string, MemoryView[]>, seed: number): Promise<void> {
  const reference = Bm25Index.build([...model.values()].flat());
  const c = corpus(seed + 1);
  const store = await openPostgresStore({ url, maxConnections: 2 });
  try {
    for (let q = 0; q < 60; q++) {
      const query = q % 10 === 0 ? 'q0z' : c.text(1, 5);
      const limit = [1, 3, 10, 48][q % 4]!;
      const kinds: ViewKind[] | undefined = q % 5 === 4 ? ['text'] : undefined;
      const options = { limit, ...(kinds ? { kinds } : {}) };
      same(
        await store.searchLexical('ctx', query, options),
        reference.search(query, options),
        `${query}/${limit}`,
      );
      // Restricted to a random candidate set: the context's statistics, the subset's documents only.
      const ids = [...model.keys()].filter(() => c.random() < 0.05);
      const wanted = new Set(ids);
      const all = reference.search(query, { ...options, limit: 1e9 }).filter((h) => wanted.has(h.memoryId));
      const expected = [...new Set(all.map((h) => h.kind))]
        .flatMap((kind) => all.filter((h) => h.kind === kind).slice(0, limit))
        .sort(compareHits);
      same(
        await store.searchLexical('ctx', query, { ...options, memoryIds: ids }),
        expected,
        `${query}/${limit}/subset`,
      );
    }
  } finally {
    await store.close();
  }
}

describe.skipIf(PG_SKIP !== undefined)('postgres lexical pruning', () => {
  it('returns exactly the unpruned reference on random data, reading less than the posting lists', async () => {
    const url = await createTestDatabase();
    const model = await fill(url, 11, false);
    await expectReference(url, model, 11);
    const store = await openPostgresStore({ url, maxConnections: 2 });
    try {
      // The most common text word: its list holds a large share of the text views.
      const before = { ...postgresLexicalCounters };
      const hits = await store.searchLexical('ctx', 'q0z', { limit: 10, kinds: ['text'] });
      const read = postgresLexicalCounters.postingsRead - before.postingsRead;
      const inLists = postgresLexicalCounters.postingsInLists - before.postingsInLists;
      console.log(`[pruning] read ${read} of ${inLists} postings`);
      expect(hits).toHaveLength(10);
      expect(inLists).toBeGreaterThan(500);
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(inLists / 2);
    } finally {
      await store.close();
    }
  });

  it('backfills impacts when migrating a schema-2 database, with the same results', async () => {
    const url = await createTestDatabase();
    const model = await fill(url, 23, true);
    await expectReference(url, model, 23);
    // Back to the schema-2 shape: no impacts, no reference lengths, the original primary key.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`
        DROP INDEX lex_postings_by_impact;
        ALTER TABLE lex_postings DROP COLUMN impact;
        ALTER TABLE lex_postings ADD PRIMARY KEY (context_id, kind, term, doc) INCLUDE (tf, length, memory_id, key);
        ALTER TABLE lex_fields DROP COLUMN reference_length;
        DELETE FROM schema_migrations WHERE version > 2;`);
    } finally {
      await admin.end();
    }
    await expectReference(url, model, 23);
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    try {
      const missing = await check.query(
        `SELECT (SELECT count(*) FROM lex_postings WHERE impact IS NULL OR impact <= 0) AS p,
           (SELECT count(*) FROM lex_fields WHERE docs > 0 AND reference_length IS NULL) AS f`,
      );
      expect(missing.rows[0]).toEqual({ p: '0', f: '0' });
    } finally {
      await check.end();
    }
  });
});
