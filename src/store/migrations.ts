import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { eventTimeKey } from './event-time-key.ts';
import { scopeTags } from './memory-scope-tags.ts';
import { backfillLexicalIndex, LEXICAL_SCHEMA_SQL, reindexLexicalIndex } from './sqlite-lexical-index.ts';
import { RELATION_KEYS_MIGRATION } from './sqlite-relation-keys.ts';
import { TOKENIZER_VERSION_META } from './store-rules.ts';

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
  RELATION_KEYS_MIGRATION,
  // Version 4: the relation journal (ArchiveStore.pendingRelationWork). No foreign key: an entry outlives the
  // memory it names when that memory was deleted.
  {
    version: 4,
    sql: `
      CREATE TABLE relation_journal (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        before TEXT
      );
      CREATE INDEX relation_journal_by_context ON relation_journal (context_id, seq);
      -- memory count per context, kept by every write and delete (COUNT(*) walks the whole context)
      ALTER TABLE contexts ADD COLUMN memories INTEGER NOT NULL DEFAULT 0;
      UPDATE contexts SET memories = (SELECT COUNT(*) FROM memories m WHERE m.context_id = contexts.id);
      -- edge counts per (context, type), kept by triggers (cascaded deletes included): countEdges stays one
      -- small read at any archive size
      CREATE TABLE edge_counts (
        context_id TEXT NOT NULL,
        type TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (context_id, type)
      ) WITHOUT ROWID;
      INSERT INTO edge_counts (context_id, type, n)
        SELECT e.context_id, t.value, COUNT(*) FROM edges e, json_each(e.types) t GROUP BY e.context_id, t.value;
      CREATE TRIGGER edges_count_insert AFTER INSERT ON edges BEGIN
        INSERT INTO edge_counts (context_id, type, n)
          SELECT NEW.context_id, value, 1 FROM json_each(NEW.types) WHERE true
          ON CONFLICT (context_id, type) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER edges_count_delete AFTER DELETE ON edges BEGIN
        UPDATE edge_counts SET n = n - 1
          WHERE context_id = OLD.context_id AND type IN (SELECT value FROM json_each(OLD.types));
      END;
      CREATE TRIGGER edges_count_update AFTER UPDATE OF types ON edges WHEN OLD.types != NEW.types BEGIN
        UPDATE edge_counts SET n = n - 1
          WHERE context_id = OLD.context_id AND type IN (SELECT value FROM json_each(OLD.types));
        INSERT INTO edge_counts (context_id, type, n)
          SELECT NEW.context_id, value, 1 FROM json_each(NEW.types) WHERE true
          ON CONFLICT (context_id, type) DO UPDATE SET n = n + 1;
      END;
      -- contexts written before relation keys: their first relation update backfills keys and rebuilds
      INSERT OR REPLACE INTO meta (key, value) SELECT 'relations-upgrade:' || id, 'true' FROM contexts;
    `,
  },
  {
    // Persistent semantic kNN state (docs/semantic-knn.md): frozen IDF snapshot, vectors as postings, lists.
    // A memory's own rows go with it (CASCADE); list rows naming a deleted memory stay until refilled.
    version: 5,
    sql: `
      CREATE TABLE semantic_snapshots (
        context_id TEXT PRIMARY KEY REFERENCES contexts(id) ON DELETE CASCADE,
        space TEXT NOT NULL,
        documents INTEGER NOT NULL,
        k INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        changes INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE semantic_df (
        context_id TEXT NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL,
        PRIMARY KEY (context_id, term)
      ) WITHOUT ROWID;
      CREATE TABLE semantic_docs (
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        threshold REAL NOT NULL,
        PRIMARY KEY (context_id, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      CREATE TABLE semantic_postings (
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        term TEXT NOT NULL,
        weight REAL NOT NULL,
        -- weight / threshold of the memory's list (1e308 while the list is open): the reverse-kNN index
        ratio REAL NOT NULL,
        PRIMARY KEY (context_id, memory_id, term),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      CREATE INDEX semantic_postings_by_weight ON semantic_postings (context_id, term, weight DESC, memory_id);
      -- covering (weight too): the reverse-kNN reads never visit the table
      CREATE INDEX semantic_postings_by_ratio ON semantic_postings (context_id, term, ratio, weight);
      CREATE TABLE semantic_neighbours (
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        rank INTEGER NOT NULL,
        neighbour_id TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (context_id, memory_id, rank),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      CREATE INDEX semantic_neighbours_by_neighbour ON semantic_neighbours (context_id, neighbour_id);
    `,
  },
  {
    // Version 6: memory history and scopes (docs/interfaces.md "Memories"). Both cascade from memories, so
    // deleteMemory / deleteContext remove them in the same transaction (forget means forget).
    version: 6,
    sql: `
      -- every replaced version of a memory, oldest first (ArchiveStore.memoryVersions)
      CREATE TABLE memory_versions (
        context_id TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        recorded_at TEXT,
        record TEXT NOT NULL,
        PRIMARY KEY (context_id, memory_id, version),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      -- scope tags (agent_id, run_id, metadata.<key> scalars; src/store/memory-scope-tags.ts): filters read
      -- the matching memories through this index instead of walking the context
      CREATE TABLE memory_tags (
        context_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        memory_id TEXT NOT NULL,
        PRIMARY KEY (context_id, name, value, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      CREATE INDEX memory_tags_by_memory ON memory_tags (context_id, memory_id);
      -- event-time filters (from/to) as an index range
      CREATE INDEX memories_by_time ON memories (context_id, timestamp);
      -- memories per (context, kind), kept by triggers like edge_counts: user stats never count rows
      CREATE TABLE kind_counts (
        context_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (context_id, kind)
      ) WITHOUT ROWID;
      INSERT INTO kind_counts (context_id, kind, n) SELECT context_id, kind, COUNT(*) FROM memories GROUP BY 1, 2;
      CREATE TRIGGER memories_kind_insert AFTER INSERT ON memories BEGIN
        INSERT INTO kind_counts (context_id, kind, n) VALUES (NEW.context_id, NEW.kind, 1)
          ON CONFLICT (context_id, kind) DO UPDATE SET n = n + 1;
      END;
      CREATE TRIGGER memories_kind_delete AFTER DELETE ON memories BEGIN
        UPDATE kind_counts SET n = n - 1 WHERE context_id = OLD.context_id AND kind = OLD.kind;
      END;
      CREATE TRIGGER memories_kind_update AFTER UPDATE OF kind ON memories WHEN OLD.kind != NEW.kind BEGIN
        UPDATE kind_counts SET n = n - 1 WHERE context_id = OLD.context_id AND kind = OLD.kind;
        INSERT INTO kind_counts (context_id, kind, n) VALUES (NEW.context_id, NEW.kind, 1)
          ON CONFLICT (context_id, kind) DO UPDATE SET n = n + 1;
      END;
      -- when the context was last written (a memory added, changed or deleted)
      ALTER TABLE contexts ADD COLUMN last_write TEXT;
    `,
    backfill: backfillScopeTags,
  },
  {
    // Version 7: terms of TOKENIZER_VERSION 2 (plural folding; src/retrieval/tokenize.ts). Every stored term
    // came from the tokenizer: the lexical index is rebuilt from the views here, and each context is marked
    // for a relation upgrade (as in version 4), so its relation keys, semantic IDF snapshot, kNN lists and
    // edges are rebuilt exactly by `graphmemix migrate` or by its next relation update. The version is a
    // literal on purpose: test/store/tokenizer-migration.test.ts fails when TOKENIZER_VERSION moves without
    // a new migration. Explicit maintenance: walks every view once.
    version: 7,
    sql: `
      INSERT OR REPLACE INTO meta (key, value) SELECT 'relations-upgrade:' || id, 'true' FROM contexts;
      INSERT OR REPLACE INTO meta (key, value) VALUES ('${TOKENIZER_VERSION_META}', '2');
    `,
    backfill: reindexLexicalIndex,
  },
  {
    // Version 8: the pending media digests of every context through one partial index, so the media queue
    // finds left work at open without listing contexts (ArchiveStore.listPendingMedia). The key literal
    // must match MEDIA_PENDING_KEY (test/digest/media/media-queue.test.ts checks the query plan).
    version: 8,
    sql: `
      CREATE INDEX IF NOT EXISTS memory_keys_media_pending ON memory_keys (context_id, memory_id)
        WHERE key = 'media-status:pending';
    `,
  },
  {
    // Version 9: cheaper kNN writes (docs/semantic-knn.md, "Storage"). The reverse-kNN ratio index made every
    // list change rewrite the ratio of each posting of its memory; the default neighbourhood reverse search
    // never reads it, so ratios are computed from semantic_docs.threshold when the exact mode asks (the
    // ratio column stays, unmaintained). Each document's vector is also kept in one row (JSON [terms,
    // weights]), so reading a candidate's vector is one row, not one per term; NULL (older rows) reads the
    // postings as before.
    // Written to be re-runnable: a file whose version was set back by hand (tests of older migrations do)
    // already has the column.
    version: 9,
    sql: 'DROP INDEX IF EXISTS semantic_postings_by_ratio;',
    backfill: addSemanticVectorColumn,
  },
  {
    // Version 10: the persistent approximate vector index (src/store/usearch-vector-index.ts). Each vector row
    // records the contexts.vector_version that wrote it (0 for older rows: every file covers them), so a
    // search finds the rows written since a file was saved by an index range; vector_ann records per
    // (context, space) the file, its sha256 and the version it covers, and goes with its context.
    // Re-runnable, like version 9 (the column is added by the backfill when missing).
    version: 10,
    sql: `
      CREATE TABLE IF NOT EXISTS vector_ann (
        context_id TEXT NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
        space TEXT NOT NULL,
        file TEXT NOT NULL,
        version INTEGER NOT NULL,
        size INTEGER NOT NULL,
        dims INTEGER NOT NULL,
        checksum TEXT NOT NULL,
        PRIMARY KEY (context_id, space)
      );
    `,
    backfill: addVectorChangedColumn,
  },
  {
    // Version 11: a marker, no schema change. semantic_neighbours.rank became a slot (a list change rewrites only
    // the rows that changed; lists are sorted by similarity on read), so a build before this one would read
    // lists written now out of order: the version makes such a build refuse the file (STORE) instead. Every
    // list written before is in rank order, which is a valid slot assignment, so nothing is rewritten.
    version: 11,
    sql: 'SELECT 1;',
  },
  {
    // Version 12: each common term's heaviest postings, and each mid-frequency term's whole list, as ONE row
    // (src/store/sqlite-semantic-top.ts): the forward search's 1,024-posting reads of truncated terms and
    // whole-list reads of the others were most of an add-100's posting rows at 1M. A row is exact whenever it exists: writes of this code enter new postings, and the trigger
    // drops a row when a posting inside it is deleted (any path: a forgotten memory's cascade included). Files
    // from before get their rows lazily, on the first such read; older code refuses this version (so none
    // writes postings without keeping the rows). Re-runnable.
    version: 12,
    sql: `
      CREATE TABLE IF NOT EXISTS semantic_top (
        context_id TEXT NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
        term TEXT NOT NULL,
        -- the n of the top-n read it answers; held < size: the term's whole list
        size INTEGER NOT NULL,
        held INTEGER NOT NULL,
        last_weight REAL NOT NULL,
        last_id TEXT NOT NULL,
        -- memory ids joined by newlines, and their weights as little-endian float64, weight desc then id
        ids TEXT NOT NULL,
        weights BLOB NOT NULL,
        PRIMARY KEY (context_id, term)
      );
      CREATE TRIGGER IF NOT EXISTS semantic_top_on_delete AFTER DELETE ON semantic_postings BEGIN
        DELETE FROM semantic_top WHERE context_id = OLD.context_id AND term = OLD.term
          AND (held < size OR OLD.weight > last_weight OR (OLD.weight = last_weight AND OLD.memory_id <= last_id));
      END;
    `,
  },
  {
    // Version 13: a scope tag's row carries its memory's sequence, and the key orders a tag's rows by (sequence,
    // memory id): a filtered page walks one tag's rows from its keyset position to its LIMIT (filter-plan.ts),
    // where a tag whose memories all sat late in the order made the first page walk the context up to them.
    // The table is rebuilt once (its rows: one per tagged memory and tag); writes copy the sequence from the
    // record, and an update rewrites its tags as before. Re-runnable (explicit columns).
    version: 13,
    sql: `
      DROP TABLE IF EXISTS memory_tags_v13;
      CREATE TABLE memory_tags_v13 (
        context_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        sequence INTEGER NOT NULL,
        memory_id TEXT NOT NULL,
        PRIMARY KEY (context_id, name, value, sequence, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      ) WITHOUT ROWID;
      INSERT INTO memory_tags_v13 (context_id, name, value, sequence, memory_id)
        SELECT t.context_id, t.name, t.value, m.sequence, t.memory_id
        FROM memory_tags t JOIN memories m ON m.context_id = t.context_id AND m.id = t.memory_id;
      DROP TABLE memory_tags;
      ALTER TABLE memory_tags_v13 RENAME TO memory_tags;
      CREATE INDEX memory_tags_by_memory ON memory_tags (context_id, memory_id);
    `,
  },
  {
    // Version 14: the stored IVF of a vector space (src/store/sqlite-stored-ivf.ts), so that without the optional
    // usearch package a fresh process searches a large space without reading all of it first. vector_spaces
    // counts each (context, space)'s rows (kept by triggers, like kind_counts: the write that crosses the
    // threshold or doubles the space is found without counting rows); vector_ivf holds its centroids; each row
    // names its list (`vectors.list`, NULL until the space is trained; added by the backfill). Re-runnable.
    version: 14,
    sql: `
      CREATE TABLE IF NOT EXISTS vector_spaces (
        context_id TEXT NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
        space TEXT NOT NULL,
        rows INTEGER NOT NULL,
        PRIMARY KEY (context_id, space)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS vector_ivf (
        context_id TEXT NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
        space TEXT NOT NULL,
        dims INTEGER NOT NULL,
        nlist INTEGER NOT NULL,
        -- the space's rows when it was trained (retrained once they have doubled)
        trained_rows INTEGER NOT NULL,
        -- a random number drawn by every training: a process's cached centroids are current while it stays
        generation INTEGER NOT NULL,
        -- nlist unit vectors of dims float32, row-major, little-endian
        centroids BLOB NOT NULL,
        PRIMARY KEY (context_id, space)
      );
      DROP TRIGGER IF EXISTS vectors_space_insert;
      DROP TRIGGER IF EXISTS vectors_space_delete;
      CREATE TRIGGER vectors_space_insert AFTER INSERT ON vectors BEGIN
        INSERT INTO vector_spaces (context_id, space, rows) VALUES (NEW.context_id, NEW.space, 1)
          ON CONFLICT (context_id, space) DO UPDATE SET rows = rows + 1;
      END;
      CREATE TRIGGER vectors_space_delete AFTER DELETE ON vectors BEGIN
        UPDATE vector_spaces SET rows = rows - 1 WHERE context_id = OLD.context_id AND space = OLD.space;
      END;
      DELETE FROM vector_spaces;
      INSERT INTO vector_spaces (context_id, space, rows) SELECT context_id, space, COUNT(*) FROM vectors GROUP BY 1, 2;
    `,
    backfill: addVectorListColumn,
  },
  {
    // Version 15: forgetting a context in steps (src/store/sqlite-context-forget.ts). A row marks a context whose
    // deletion has begun: writes to it are refused (writeMemories checks inside its transaction) and so are the
    // library's reads; `stage` and `cursor` say where the next step resumes (a killed process's forget resumes
    // when forget is called again). No foreign key: the row goes in the same transaction as the context row.
    version: 15,
    sql: `
      CREATE TABLE IF NOT EXISTS forgetting (
        context_id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        stage INTEGER NOT NULL DEFAULT 0,
        cursor TEXT
      ) WITHOUT ROWID;
    `,
  },
  {
    // Version 16: the indexed event time of a memory with a numeric UTC offset is the same instant in UTC
    // (event-time-key.ts), so a time window compares instants; records keep the time as written. Only rows
    // whose time ends in an offset are read and rewritten (a full scan of the column once; none in most
    // archives). Re-runnable: the key of a key is itself.
    version: 16,
    sql: '',
    backfill: utcEventTimes,
  },
  {
    // Version 17: the media reference keys (MEDIA_KEY, one per local media path of a memory) of every context
    // in one partial index, so a delete asks whether any memory still references a file with one probe per
    // file instead of one per context (ArchiveStore.heldMediaKeys; the literals match MEDIA_KEY_RANGE).
    version: 17,
    sql: `
      CREATE INDEX IF NOT EXISTS memory_keys_media_refs ON memory_keys (key)
        WHERE key >= 'media:' AND key < 'media;';
    `,
  },
];

/** Version 16: memories whose indexed time carries an offset get its UTC form. */
function utcEventTimes(db: Database.Database): void {
  const rows = db
    .prepare(
      `SELECT context_id, id, timestamp FROM memories
       WHERE timestamp GLOB '*[0-9][+-][0-9][0-9]:[0-9][0-9]' OR timestamp GLOB '*[0-9][+-][0-9][0-9][0-9][0-9]'`,
    )
    .all() as { context_id: string; id: string; timestamp: string }[];
  const update = db.prepare('UPDATE memories SET timestamp = ? WHERE context_id = ? AND id = ?');
  for (const row of rows) {
    const key = eventTimeKey(row.timestamp);
    if (key !== row.timestamp) update.run(key, row.context_id, row.id);
  }
}

/** Version 14: the list column of vectors and its index, unless they are there already. */
function addVectorListColumn(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(vectors)').all() as { name: string }[];
  if (!columns.some((column) => column.name === 'list')) {
    db.exec('ALTER TABLE vectors ADD COLUMN list INTEGER');
  }
  db.exec('CREATE INDEX IF NOT EXISTS vectors_by_list ON vectors (context_id, space, list)');
}

/** Version 10: the version column of vectors and its index, unless they are there already. */
function addVectorChangedColumn(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(vectors)').all() as { name: string }[];
  if (!columns.some((column) => column.name === 'changed')) {
    db.exec('ALTER TABLE vectors ADD COLUMN changed INTEGER NOT NULL DEFAULT 0');
  }
  db.exec('CREATE INDEX IF NOT EXISTS vectors_changed ON vectors (context_id, space, changed)');
}

/** Version 9: the vector column of semantic_docs, unless it is there already. */
function addSemanticVectorColumn(db: Database.Database): void {
  const columns = db.prepare('PRAGMA table_info(semantic_docs)').all() as { name: string }[];
  if (!columns.some((column) => column.name === 'vector')) {
    db.exec('ALTER TABLE semantic_docs ADD COLUMN vector TEXT');
  }
}

/** Tags of memories written before version 6 (metadata scalars; older records have no agent or run). */
function backfillScopeTags(db: Database.Database): void {
  const insert = db.prepare(
    'INSERT OR IGNORE INTO memory_tags (context_id, name, value, memory_id) VALUES (?, ?, ?, ?)',
  );
  // Paged by rowid: better-sqlite3 cannot write while an iterator is open on the same connection.
  const page = db.prepare(
    'SELECT rowid AS at, context_id, id, record FROM memories WHERE rowid > ? ORDER BY rowid LIMIT 1000',
  );
  let after = 0;
  for (;;) {
    const rows = page.all(after) as { at: number; context_id: string; id: string; record: string }[];
    for (const row of rows) {
      for (const tag of scopeTags(JSON.parse(row.record) as MemoryRecord)) {
        insert.run(row.context_id, tag.name, tag.value, row.id);
      }
    }
    if (rows.length < 1000) return;
    after = rows[rows.length - 1]!.at;
  }
}

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
    // The version is re-read inside the write lock: two processes opening one old file at once must not
    // both apply a migration.
    db.transaction(() => {
      const now = db.prepare('SELECT version FROM schema_version').get() as { version: number } | undefined;
      if ((now?.version ?? 0) >= migration.version) return;
      db.exec(migration.sql);
      migration.backfill?.(db);
      db.prepare('DELETE FROM schema_version').run();
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(migration.version);
    }).immediate();
  }
}
