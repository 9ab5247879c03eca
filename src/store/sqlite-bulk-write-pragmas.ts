import { availableParallelism } from 'node:os';
import type Database from 'better-sqlite3';

// Connection settings a bulk write changes for its own duration and restores (sqlite-semantic-index.ts,
// sqlite-memory-writes.ts).

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
