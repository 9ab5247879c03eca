import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { compactSemantic } from '../../src/digest/incremental/compact-semantic.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { openStore } from '../../src/store/open-store.ts';
import { BULK_INDEX_REBUILD_FROM } from '../../src/store/sqlite-semantic-index.ts';
import { write } from './store-conformance.ts';

const dir = mkdtempSync(join(tmpdir(), 'graphmemix-bulkidx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = ['harbour', 'sunset', 'milk', 'eggs', 'dog', 'dawn', 'walk', 'picnic', 'train', 'rain', 'tea'];

/** `count` memories of three words each (a seeded mix, so lists and postings differ between memories). */
async function fill(store: ArchiveStore, contextId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  const writes = [];
  for (let i = 0; i < count; i++) {
    const id = `${contextId}-${String(i).padStart(5, '0')}`;
    const text = [i % 11, (i * 7 + 3) % 11, (i * 13 + 5) % 11].map((w) => WORDS[w]).join(' ') + ` n${i}`;
    writes.push(write(contextId, id, text, i));
    ids.push(id);
  }
  await store.writeMemories(contextId, writes);
  return ids;
}

/** The schema cookie: every CREATE / DROP moves it, so it tells whether a compaction rebuilt the indexes. */
function schemaVersion(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('schema_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

function indexSql(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db
        .prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
          AND tbl_name IN ('semantic_postings', 'semantic_neighbours') ORDER BY name`)
        .pluck()
        .all() as string[]
    ).sort();
  } finally {
    db.close();
  }
}

/** What the two rebuilt indexes answer (top postings per word, referrers) must follow from the documents. */
async function expectIndexesAnswer(store: ArchiveStore, contextId: string, ids: string[]): Promise<void> {
  const docs = await store.semantic.getDocs(contextId, ids);
  for (const term of ['harbour', 'tea']) {
    const want = docs
      .flatMap((doc) => {
        const at = doc.terms.indexOf(term);
        return at < 0 ? [] : [{ memoryId: doc.memoryId, weight: doc.weights[at]! }];
      })
      .sort((x, y) => y.weight - x.weight || (x.memoryId < y.memoryId ? -1 : 1))
      .slice(0, 5);
    expect(await store.semantic.postings(contextId, term, { top: 5 })).toEqual(want);
  }
  const target = ids[7]!;
  const want = docs
    .filter((doc) => doc.neighbours.some((n) => n.memoryId === target))
    .map((doc) => doc.memoryId)
    .sort();
  expect(want.length).toBeGreaterThan(0);
  expect(await store.semantic.referrers(contextId, [target])).toEqual(want);
}

describe('SQLite semantic replaceAll: secondary indexes of a bulk rebuild', () => {
  it('rebuilds them by one sort when the context is most of the file, and keeps them otherwise', async () => {
    const file = join(dir, 'bulk.db');
    const store = await openStore(file);
    const before = indexSql(file);
    expect(before.length).toBe(2);

    const big = await fill(store, 'big', BULK_INDEX_REBUILD_FROM + 500);
    let version = schemaVersion(file);
    await compactSemantic(store, 'big', { k: 4 });
    // The only context: dropped and created again (two indexes, two schema changes each), same definitions.
    expect(schemaVersion(file)).toBe(version + 4);
    expect(indexSql(file)).toEqual(before);
    await expectIndexesAnswer(store, 'big', big);

    // A context smaller than the rest of the file: row by row, the schema stays.
    const small = await fill(store, 'small', BULK_INDEX_REBUILD_FROM);
    version = schemaVersion(file);
    await compactSemantic(store, 'small', { k: 4 });
    expect(schemaVersion(file)).toBe(version);
    await expectIndexesAnswer(store, 'small', small);

    // The larger one again: rebuilt over both contexts' rows; the other context's entries are all there.
    await compactSemantic(store, 'big', { k: 4 });
    expect(schemaVersion(file)).toBe(version + 4);
    expect(indexSql(file)).toEqual(before);
    await expectIndexesAnswer(store, 'big', big);
    await expectIndexesAnswer(store, 'small', small);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });

  it('leaves a context below the bulk size to row-by-row updates', async () => {
    const file = join(dir, 'few.db');
    const store = await openStore(file);
    const ids = await fill(store, 'few', 300);
    const version = schemaVersion(file);
    await compactSemantic(store, 'few', { k: 4 });
    expect(schemaVersion(file)).toBe(version);
    await expectIndexesAnswer(store, 'few', ids);
    await store.close();
  });
});

/** Every row of the context's semantic tables (the snapshot's time left out), in key order. */
function semanticRows(file: string, contextId: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = (sql: string) => db.prepare(sql).raw().all(contextId);
    return {
      snapshot: rows('SELECT space, documents, k, changes FROM semantic_snapshots WHERE context_id = ?'),
      df: rows('SELECT term, df FROM semantic_df WHERE context_id = ? ORDER BY term'),
      docs: rows(
        'SELECT memory_id, threshold, vector FROM semantic_docs WHERE context_id = ? ORDER BY memory_id',
      ),
      postings: rows(`SELECT memory_id, term, weight, ratio FROM semantic_postings WHERE context_id = ?
        ORDER BY memory_id, term`),
      lists: rows(`SELECT memory_id, rank, neighbour_id, score FROM semantic_neighbours WHERE context_id = ?
        ORDER BY memory_id, rank`),
      top: rows(`SELECT term, size, held, last_weight, last_id, ids, hex(weights) FROM semantic_top
        WHERE context_id = ? ORDER BY term`),
    };
  } finally {
    db.close();
  }
}

describe('SQLite staged replace (a rebuild through a write queue)', () => {
  it('stages the documents in turns of their own and stores the rows replaceAll stores, indexes rebuilt', async () => {
    const atOnceFile = join(dir, 'at-once.db');
    const stagedFile = join(dir, 'staged.db');
    const atOnce = await openStore(atOnceFile);
    const staged = await openStore(stagedFile);
    const count = BULK_INDEX_REBUILD_FROM + 500;
    const ids = await fill(atOnce, 'big', count);
    await fill(staged, 'big', count);
    await compactSemantic(atOnce, 'big', { k: 4 });
    const version = schemaVersion(stagedFile);
    const turns: string[] = [];
    await compactSemantic(staged, 'big', {
      k: 4,
      turn: async (work) => {
        turns.push(String(schemaVersion(stagedFile)));
        return work();
      },
    });
    // A staging turn (the documents into temp tables: the archive's schema unchanged), the commit (indexes
    // dropped and created again: 4 schema changes), the edges.
    expect(turns).toEqual([String(version), String(version), String(version + 4)]);
    expect(schemaVersion(stagedFile)).toBe(version + 4);
    expect(indexSql(stagedFile)).toEqual(indexSql(atOnceFile));
    expect(semanticRows(stagedFile, 'big')).toEqual(semanticRows(atOnceFile, 'big'));
    expect(await staged.neighbors('big', ids)).toEqual(await atOnce.neighbors('big', ids));
    expect((await staged.countEdges('big')).semantic_knn).toBeGreaterThan(0);
    await expectIndexesAnswer(staged, 'big', ids);
    expect((await staged.integrityCheck()).ok).toBe(true);
    await atOnce.close();
    await staged.close();
  });

  it('checks the ids the foreign keys would check, and leaves them on for everything after it', async () => {
    const store = await openStore(join(dir, 'checks.db'));
    await fill(store, 'ctx', 3);
    const snapshot = {
      space: 'tfidf',
      documents: 1,
      k: 2,
      createdAt: '2026-01-01T00:00:00.000Z',
      df: new Map(),
    };
    const vector = { terms: ['tea'], weights: [1], neighbours: [] };
    const nowhere = store.semantic.stagedReplace!('nowhere', 2);
    await nowhere.stage([]);
    await expect(nowhere.commit(snapshot)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(await store.semantic.getSnapshot('nowhere')).toBeUndefined();
    const stranger = store.semantic.stagedReplace!('ctx', 2);
    await stranger.stage([
      { memoryId: 'ctx-00000', ...vector },
      { memoryId: 'stranger', ...vector },
    ]);
    await expect(stranger.commit(snapshot)).rejects.toThrow(/unknown memory "stranger"/);
    expect(await store.semantic.getSnapshot('ctx')).toBeUndefined();
    const fine = store.semantic.stagedReplace!('ctx', 2);
    await fine.stage([{ memoryId: 'ctx-00001', ...vector }]);
    await fine.commit(snapshot);
    expect((await store.semantic.getDocs('ctx', ['ctx-00001'])).length).toBe(1);
    // replaceAll relies on the foreign keys for its unknown ids: they are on again.
    await expect(
      store.semantic.replaceAll('ctx', snapshot, [{ memoryId: 'stranger', ...vector }]),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await store.semantic.getDocs('ctx', ['ctx-00001'])).length).toBe(1);
    expect((await store.integrityCheck()).ok).toBe(true);
    await store.close();
  });
});
