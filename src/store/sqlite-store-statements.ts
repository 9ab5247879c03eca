import type Database from 'better-sqlite3';
import { lazyStatement } from './lazy-statement.ts';

/** The SQLite store's statements (named, so that the declaration build can write this type). */
type StatementName =
  | 'listContextFirstPage'
  | 'listContextPage'
  | 'addCount'
  | 'maxSequence'
  | 'ensureContext'
  | 'vectorVersion'
  | 'bumpVectorVersion'
  | 'getHash'
  | 'insertMemory'
  | 'updateMemory'
  | 'deleteMemory'
  | 'insertVersion'
  | 'listVersions'
  | 'newestVersions'
  | 'insertTag'
  | 'touchContext'
  | 'contextRow'
  | 'kindCounts'
  | 'deleteTags'
  | 'getRecord'
  | 'writeGeneration'
  | 'getRecords'
  | 'getHashes'
  | 'listRecords'
  | 'listRecordsAfter'
  | 'listRecordsAfterId'
  | 'countMemories'
  | 'insertView'
  | 'deleteViews'
  | 'getViews'
  | 'lexicalDocuments'
  | 'listEdges'
  | 'anyEdge'
  | 'deleteEdge'
  | 'getEdge'
  | 'edgesOf'
  | 'edgesAmong'
  | 'countEdgeTypes'
  | 'otherEdges'
  | 'begin'
  | 'commit'
  | 'rollback'
  | 'dropUniqueSemanticTerms'
  | 'upsertQuestion'
  | 'listQuestions'
  | 'listAllQuestions'
  | 'spaceDims'
  | 'upsertVector'
  | 'deleteMemoryVectors'
  | 'listVectors'
  | 'journal'
  | 'pendingWork'
  | 'clearWork'
  | 'workStatus'
  | 'hasWork'
  | 'workContexts'
  | 'clearWorkThrough'
  | 'getMeta'
  | 'setMeta'
  | 'deleteMeta'
  | 'listMetaKeys'
  | 'listVectorSpaces'
  | 'forgettingMark'
  | 'forgettingContexts';

/** The SQLite store's statements, prepared on first use (lazy-statement.ts). */
export type SqliteStoreStatements = Record<StatementName, Database.Statement>;

export function prepareSqliteStoreStatements(db: Database.Database): SqliteStoreStatements {
  const p = (sql: string) => lazyStatement(db, sql);
  // Rows as arrays, for the question path's edge reads (edgeRows turns them into EdgeRow).
  const raw = (sql: string) => lazyStatement(db, sql, true);
  // A read-only store of an older schema (not migrated) has no kept count: count the rows then.
  const kept = (db.pragma('table_info(contexts)') as { name: string }[]).some((c) => c.name === 'memories');
  const memoryCount = kept ? 'c.memories' : '(SELECT COUNT(*) FROM memories m WHERE m.context_id = c.id)';
  // Counts are kept on the context row and MAX(sequence) is one index probe: listing stays cheap at any size.
  const contextRows = `SELECT c.id AS id, ${memoryCount} AS memories,
    (SELECT MAX(m.sequence) FROM memories m WHERE m.context_id = c.id) AS maxSequence FROM contexts c`;
  return {
    // Keyset pages over the contexts primary key (LIMIT -1: no limit); the first page has a statement of its
    // own (`? IS NULL OR c.id > ?` is no range: every later page walked the contexts before it).
    listContextFirstPage: p(`${contextRows} ORDER BY c.id LIMIT ?`),
    listContextPage: p(`${contextRows} WHERE c.id > ? ORDER BY c.id LIMIT ?`),
    addCount: p('UPDATE contexts SET memories = memories + ? WHERE id = ?'),
    maxSequence: p('SELECT MAX(sequence) AS n FROM memories WHERE context_id = ?'),
    ensureContext: p('INSERT OR IGNORE INTO contexts (id) VALUES (?)'),
    vectorVersion: p('SELECT vector_version FROM contexts WHERE id = ?'),
    bumpVectorVersion: p('UPDATE contexts SET vector_version = vector_version + 1 WHERE id = ?'),
    getHash: p('SELECT content_hash FROM memories WHERE context_id = ? AND id = ?'),
    insertMemory: p(`INSERT INTO memories (context_id, id, sequence, kind, session_id, round_id, timestamp,
      content_hash, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    updateMemory: p(`UPDATE memories SET sequence = ?, kind = ?, session_id = ?, round_id = ?, timestamp = ?,
      content_hash = ?, record = ? WHERE context_id = ? AND id = ?`),
    deleteMemory: p('DELETE FROM memories WHERE context_id = ? AND id = ?'),
    insertVersion: p(`INSERT INTO memory_versions (context_id, memory_id, version, recorded_at, record)
      SELECT ?, ?, COALESCE(MAX(version), 0) + 1, ?, ? FROM memory_versions WHERE context_id = ? AND memory_id = ?`),
    // LIMIT -1: no limit. Both walk the primary key (context, memory, version) from one end.
    listVersions: p(`SELECT version, record FROM memory_versions WHERE context_id = ? AND memory_id = ?
      AND version > ? ORDER BY version LIMIT ?`),
    newestVersions: p(`SELECT version, record FROM memory_versions WHERE context_id = ? AND memory_id = ?
      ORDER BY version DESC LIMIT ?`),
    insertTag: p(
      'INSERT OR IGNORE INTO memory_tags (context_id, name, value, sequence, memory_id) VALUES (?, ?, ?, ?, ?)',
    ),
    touchContext: p('UPDATE contexts SET last_write = ? WHERE id = ?'),
    contextRow: p('SELECT memories, last_write FROM contexts WHERE id = ?'),
    kindCounts: p('SELECT kind, n FROM kind_counts WHERE context_id = ? ORDER BY kind'),
    deleteTags: p('DELETE FROM memory_tags WHERE context_id = ? AND memory_id = ?'),
    // A context being forgotten in steps (sqlite-context-forget.ts): its writes and the library's reads refused.
    forgettingMark: p('SELECT 1 FROM forgetting WHERE context_id = ?'),
    forgettingContexts: p('SELECT context_id FROM forgetting ORDER BY started_at, context_id'),
    getRecord: p('SELECT record FROM memories WHERE context_id = ? AND id = ?'),
    // This connection's row changes (committed or not) and other connections' commits: the read cache's key.
    writeGeneration: p('SELECT total_changes() AS changes, data_version AS version FROM pragma_data_version'),
    getRecords: p(
      'SELECT id, record FROM memories WHERE context_id = ? AND id IN (SELECT value FROM json_each(?))',
    ),
    getHashes: p(
      'SELECT id, content_hash FROM memories WHERE context_id = ? AND id IN (SELECT value FROM json_each(?))',
    ),
    // One statement per keyset shape, the position a row value SQLite seeks memories_by_sequence to: written as
    // `@after IS NULL OR sequence > @after OR (...)` it walked the context from its start to the page (a page
    // at the end of 10k memories 0.94 ms, at the start 0.20; at 200k 18.7 ms at the end, 0.11 now).
    listRecords: p(
      'SELECT record FROM memories WHERE context_id = @contextId ORDER BY sequence, id LIMIT @limit',
    ),
    listRecordsAfter: p(`SELECT record FROM memories WHERE context_id = @contextId AND sequence > @after
      ORDER BY sequence, id LIMIT @limit`),
    listRecordsAfterId: p(`SELECT record FROM memories WHERE context_id = @contextId
      AND (sequence, id) > (@after, @afterId) ORDER BY sequence, id LIMIT @limit`),
    countMemories: p(`SELECT ${memoryCount} AS n FROM contexts c WHERE c.id = ?`),
    insertView: p(
      'INSERT INTO views (context_id, memory_id, position, kind, key, text, uri) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteViews: p('DELETE FROM views WHERE context_id = ? AND memory_id = ?'),
    getViews: p(`SELECT memory_id, kind, key, text, uri FROM views
      WHERE context_id = ? AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, position`),
    lexicalDocuments: p(`SELECT memory_id AS memoryId, kind, key, text FROM views
      WHERE context_id = ? AND text != '' ORDER BY memory_id, position`),
    listEdges: p('SELECT a, b, types, strength, similarity FROM edges WHERE context_id = ?'),
    anyEdge: p('SELECT 1 FROM edges WHERE context_id = ? LIMIT 1'),
    deleteEdge: p('DELETE FROM edges WHERE context_id = ? AND a = ? AND b = ?'),
    getEdge: p(
      'SELECT a, b, types, strength, similarity FROM edges WHERE context_id = ? AND a = ? AND b = ?',
    ),
    edgesOf: raw(`SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND a IN (SELECT value FROM json_each(?))
      UNION ALL SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND b IN (SELECT value FROM json_each(?))`),
    // a IN ids probes the primary key (context_id, a, b) once per id; b is checked against the same list.
    edgesAmong: raw(`SELECT a, b, types, strength, similarity FROM edges
      WHERE context_id = ? AND a IN (SELECT value FROM json_each(?)) AND b IN (SELECT value FROM json_each(?))`),
    countEdgeTypes: p('SELECT type, n FROM edge_counts WHERE context_id = ?'),
    // Other contexts' edges (per-type counts: an edge of two types counts twice), read through at most `?`
    // nonzero rows: each counts at least 1, so the sum answers "more than the write?" without a whole scan.
    otherEdges: p(`SELECT COALESCE(SUM(n), 0) AS n FROM
      (SELECT n FROM edge_counts WHERE context_id != ? AND n > 0 LIMIT ?)`),
    begin: p('BEGIN IMMEDIATE'),
    commit: p('COMMIT'),
    rollback: p('ROLLBACK'),
    dropUniqueSemanticTerms: p(`DELETE FROM semantic_df WHERE context_id = ? AND df <= 1 AND term IN
      (SELECT term FROM semantic_postings WHERE context_id = ? AND memory_id = ?)`),
    upsertQuestion: p(`INSERT INTO questions (context_id, id, question) VALUES (?, ?, ?)
      ON CONFLICT (context_id, id) DO UPDATE SET question = excluded.question`),
    listQuestions: p('SELECT question FROM questions WHERE context_id = ? ORDER BY rowid'),
    listAllQuestions: p('SELECT question FROM questions ORDER BY rowid'),
    spaceDims: p('SELECT dims FROM vectors WHERE context_id = ? AND space = ? LIMIT 1'),
    upsertVector:
      p(`INSERT INTO vectors (context_id, space, memory_id, kind, key, dims, vector, changed, list)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (context_id, space, memory_id, kind, key)
      DO UPDATE SET dims = excluded.dims, vector = excluded.vector, changed = excluded.changed, list = excluded.list`),
    deleteMemoryVectors: p('DELETE FROM vectors WHERE context_id = ? AND memory_id = ?'),
    listVectors: p(`SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ?
      ORDER BY memory_id, kind, key`),
    journal: p('INSERT INTO relation_journal (context_id, memory_id, before) VALUES (?, ?, ?)'),
    pendingWork: p(
      'SELECT seq, memory_id, before FROM relation_journal WHERE context_id = ? ORDER BY seq LIMIT ?',
    ),
    clearWork: p(
      'DELETE FROM relation_journal WHERE context_id = ? AND seq IN (SELECT value FROM json_each(?))',
    ),
    workStatus: p('SELECT COUNT(*) AS n, MAX(seq) AS last FROM relation_journal WHERE context_id = ?'),
    hasWork: p('SELECT EXISTS (SELECT 1 FROM relation_journal WHERE context_id = ?) AS pending'),
    workContexts: p('SELECT DISTINCT context_id FROM relation_journal ORDER BY context_id'),
    clearWorkThrough: p('DELETE FROM relation_journal WHERE context_id = ? AND seq <= ?'),
    getMeta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    deleteMeta: p('DELETE FROM meta WHERE key = ?'),
    listMetaKeys: p('SELECT key FROM meta WHERE key >= ? AND key < ? ORDER BY key'),
    listVectorSpaces: p('SELECT DISTINCT space FROM vectors WHERE context_id = ? ORDER BY space'),
  };
}
