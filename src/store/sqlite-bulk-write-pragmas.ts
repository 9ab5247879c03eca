import { availableParallelism } from 'node:os';
import type Database from 'better-sqlite3';

// What a bulk write changes for its own duration and restores: connection settings, and secondary indexes
// dropped while its rows go in (sqlite-semantic-index.ts, sqlite-memory-writes.ts, sqlite-relations.ts).

/**
 * Helper threads SQLite's sorter may use for a bulk CREATE INDEX: the cores beside this one, at most 2. The
 * index rebuild of a bulk semantic rewrite runs after the kNN pass, when the other cores are idle; its sort
 * on one helper thread took ~8-10% off a 300k context's `replaceAll` wall time (docs/semantic-knn.md).
 */
export const SORTER_THREADS = Math.max(0, Math.min(2, availableParallelism() - 1));

/**
 * `work` with SQLite's sorter allowed `threads` helper threads (PRAGMA threads), the connection's previous
 * value restored after it, thrown or not: the setting is per connection, and other statements' sorts (a
 * question's ORDER BY) keep running on one thread. The sorted output, hence the index, is the same.
 */
export function withSorterThreads<T>(db: Database.Database, work: () => T, threads = SORTER_THREADS): T {
  const before = db.pragma('threads', { simple: true }) as number;
  if (threads === before) return work();
  db.pragma(`threads = ${Math.trunc(threads)}`);
  try {
    return work();
  } finally {
    db.pragma(`threads = ${before}`);
  }
}

/**
 * Records from which one `writeMemories` call runs without the foreign-key checks (a bulk import's batches).
 * Turning them off and on expires every prepared statement, so each batch re-prepares the statements it uses
 * (~60 us for 40 one-row statements; ~3 ms for an import batch's multi-row ones: 100k memories in 500-record
 * batches took 8.0-8.6 s of memory-write CPU with the checks off for the whole run, 9.2-9.4 s switched per
 * batch), which a large batch repays and a small write would not: 100k in 2,000-record batches, 8.75-8.83 s
 * with the checks, 7.97-7.98 s switched per batch.
 */
export const BULK_MEMORY_WRITE_UNCHECKED_FROM = 64;

/**
 * `work` with SQLite's foreign-key checks off, for a bulk write that checks its ids itself (a staged
 * commit's copy, replaceAll: one check per document instead of one parent lookup per row, ~20 per memory;
 * ~0.6 s of a staged copy's 2.1 s at 100k memories). The pragma is set outside the transaction
 * (inside one SQLite ignores it, and the rows are then checked one by one as before) and restored after it; a
 * connection that had them off keeps them off.
 */
export function withoutForeignKeyChecks<T>(db: Database.Database, work: () => T): T {
  if (db.inTransaction) return work();
  const before = db.pragma('foreign_keys', { simple: true }) as number;
  if (before === 0) return work();
  db.pragma('foreign_keys = OFF');
  try {
    return work();
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

/** A secondary index as the schema holds it: dropped by name, made again by its own CREATE statement. */
export interface IndexDefinition {
  name: string;
  sql: string;
}

/** The explicit indexes of `tables`, by name (sql NULL: a primary key's own index, never dropped). */
export function explicitIndexes(db: Database.Database, tables: readonly string[]): IndexDefinition[] {
  return db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
      AND tbl_name IN (SELECT value FROM json_each(?)) ORDER BY name`)
    .all(JSON.stringify(tables)) as IndexDefinition[];
}

/**
 * `work` with `indexes` dropped before it and made again after it by the same statements (so the schema reads
 * the same), one sort each, the sorter on helper threads: for a bulk write whose rows reach an index in random
 * order. Call it inside the write's transaction, so a failure takes the drop back with everything else.
 */
export function withIndexesRebuilt<T>(
  db: Database.Database,
  indexes: readonly IndexDefinition[],
  work: () => T,
): T {
  for (const { name } of indexes) db.exec(`DROP INDEX "${name}"`);
  const result = work();
  withSorterThreads(db, () => {
    for (const { sql } of indexes) db.exec(sql);
  });
  return result;
}
