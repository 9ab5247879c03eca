import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { backfillLexicalIndex, LEXICAL_SCHEMA_SQL } from './sqlite-lexical-index.ts';

/**
 * Schema migrations of the SQLite store, applied in order inside one transaction each. The version lives in
 * the `schema_version` table. Never edit a released migration: append a new one.
 *
 * Rows carry their context id and every child row references its memory with ON DELETE CASCADE, so deleting
 * a memory removes its views, vectors and edges in the database itself (and a dangling edge cannot exist).
 */
export const MIGRATIONS: readonly {
  version: number;
  sql: string;
  /** Data work after the DDL, in the same transaction (e.g. indexing rows written by older code). */
  backfill?: (db: Database.Database) => void;
}[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE contexts (
        id TEXT PRIMARY KEY,
        -- bumped on every memory write/delete; readers compare it to drop cached BM25 indexes
        version INTEGER NOT NULL DEFAULT 0,
        -- bumped on every vector write/delete; readers compare it to drop cached vector indexes
        vector_version INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE memories (
        context_id TEXT NOT NULL REFERENCES contexts(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        kind TEXT NOT NULL,
        session_id TEXT,
        round_id TEXT,
        timestamp TEXT,
        content_hash TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (context_id, id)
      );
      CREATE INDEX memories_by_sequence ON memories (context_id, sequence, id);
      CREATE TABLE views (
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        text TEXT NOT NULL,
        uri TEXT,
        PRIMARY KEY (context_id, memory_id, kind, key),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE TABLE edges (
        context_id TEXT NOT NULL,
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        types TEXT NOT NULL,
        strength REAL NOT NULL,
        similarity REAL,
        PRIMARY KEY (context_id, a, b),
        CHECK (a < b),
        FOREIGN KEY (context_id, a) REFERENCES memories (context_id, id) ON DELETE CASCADE,
        FOREIGN KEY (context_id, b) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX edges_by_b ON edges (context_id, b);
      CREATE TABLE vectors (
        context_id TEXT NOT NULL,
        space TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        dims INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (context_id, space, memory_id, kind, key),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX vectors_by_memory ON vectors (context_id, memory_id);
      CREATE TABLE questions (
        context_id TEXT NOT NULL,
        id TEXT NOT NULL,
        question TEXT NOT NULL,
        PRIMARY KEY (context_id, id)
      );
    `,
  },
  {
    // Persistent lexical index (src/store/sqlite-lexical-index.ts), backfilled from the existing views.
    version: 2,
    sql: LEXICAL_SCHEMA_SQL,
    backfill: backfillLexicalIndex,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Brings the database to SCHEMA_VERSION; refuses a store written by newer code (STORE). */
export function migrate(db: Database.Database, file: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
  const row = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
  const current = row?.version ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new GraphmemixError(
      'STORE',
      `store schema version ${current} is newer than this graphmemix (${SCHEMA_VERSION}); upgrade graphmemix`,
      { location: { file }, details: { storeVersion: current, supported: SCHEMA_VERSION } },
    );
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      migration.backfill?.(db);
      db.prepare('DELETE FROM schema_version').run();
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(migration.version);
    })();
  }
}
