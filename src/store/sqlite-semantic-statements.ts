import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import { multiRowInsert } from './multi-row-insert.ts';

/** The ratio stored for an open list (threshold 0): SQLite REAL, read back as Infinity. */
export const OPEN_RATIO = 1e308;

/** A posting's ratio from its document's list threshold (OPEN_RATIO while the list is open). */
const RATIO = `CASE WHEN d.threshold > 0 THEN p.weight / d.threshold ELSE ${OPEN_RATIO} END`;

/** The semantic index's prepared statements (named, so that the declaration build can write this type). */
type StatementName =
  | 'dataVersion'
  | 'getSnapshot'
  | 'upsertSnapshot'
  | 'thresholds'
  | 'otherDocuments'
  | 'addChanges'
  | 'dfIn'
  | 'insertDf'
  | 'clearDf'
  | 'clearDocs'
  | 'contextKnown'
  | 'unknownDocMemory'
  | 'clearPostings'
  | 'clearNeighbours'
  | 'getDoc'
  | 'insertDoc'
  | 'setThreshold'
  | 'deleteDoc'
  | 'docsIn'
  | 'postingsIn'
  | 'neighboursIn'
  | 'deletePostings'
  | 'insertNeighbour'
  | 'deleteNeighbours'
  | 'listRows'
  | 'setNeighbour'
  | 'setNeighbourScore'
  | 'deleteNeighbour'
  | 'referrers'
  | 'maxWeight'
  | 'maxRatio'
  | 'topPostings'
  | 'postingsAboveWeight'
  | 'postingsAboveRatio';

/** What prepareSemanticStatements returns: the statements, and the two multi-row writers. */
export type SemanticStatements = Record<StatementName, Database.Statement> & {
  insertPostings: (values: readonly unknown[], rows: number) => void;
  insertNeighbours: (values: readonly unknown[], rows: number) => void;
};

/** The statements of the SQLite semantic index (sqlite-semantic-index.ts), prepared on first use. */
export function prepareSemanticStatements(db: Database.Database): SemanticStatements {
  const p = (sql: string) => db.prepare(sql);
  return {
    dataVersion: p('PRAGMA data_version').pluck(),
    getSnapshot: p(
      'SELECT space, documents, k, created_at, changes FROM semantic_snapshots WHERE context_id = ?',
    ),
    upsertSnapshot: p(`INSERT INTO semantic_snapshots (context_id, space, documents, k, created_at, changes)
      VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT (context_id) DO UPDATE SET space = excluded.space,
      documents = excluded.documents, k = excluded.k, created_at = excluded.created_at, changes = 0`),
    thresholds: p('SELECT memory_id, threshold FROM semantic_docs WHERE context_id = ?'),
    otherDocuments: p(
      'SELECT COALESCE(SUM(documents), 0) FROM semantic_snapshots WHERE context_id != ?',
    ).pluck(),
    addChanges: p('UPDATE semantic_snapshots SET changes = changes + ? WHERE context_id = ?'),
    dfIn: p(
      'SELECT term, df FROM semantic_df WHERE context_id = ? AND term IN (SELECT value FROM json_each(?))',
    ).raw(),
    insertDf: p('INSERT INTO semantic_df (context_id, term, df) VALUES (?, ?, ?)'),
    clearDf: p('DELETE FROM semantic_df WHERE context_id = ?'),
    clearDocs: p('DELETE FROM semantic_docs WHERE context_id = ?'),
    contextKnown: p('SELECT 1 FROM contexts WHERE id = ?').pluck(),
    unknownDocMemory: p(`SELECT d.memory_id FROM semantic_docs d WHERE d.context_id = ? AND NOT EXISTS
      (SELECT 1 FROM memories m WHERE m.context_id = d.context_id AND m.id = d.memory_id) LIMIT 1`).pluck(),
    clearPostings: p('DELETE FROM semantic_postings WHERE context_id = ?'),
    clearNeighbours: p('DELETE FROM semantic_neighbours WHERE context_id = ?'),
    getDoc: p('SELECT threshold FROM semantic_docs WHERE context_id = ? AND memory_id = ?'),
    insertDoc: p('INSERT INTO semantic_docs (context_id, memory_id, threshold, vector) VALUES (?, ?, ?, ?)'),
    setThreshold: p('UPDATE semantic_docs SET threshold = ? WHERE context_id = ? AND memory_id = ?'),
    deleteDoc: p('DELETE FROM semantic_docs WHERE context_id = ? AND memory_id = ?'),
    docsIn: p(`SELECT memory_id, threshold, vector FROM semantic_docs WHERE context_id = ?
      AND memory_id IN (SELECT value FROM json_each(?))`).raw(),
    postingsIn: p(`SELECT memory_id, term, weight FROM semantic_postings WHERE context_id = ?
      AND memory_id IN (SELECT value FROM json_each(?))`).raw(),
    neighboursIn: p(`SELECT memory_id, neighbour_id, score FROM semantic_neighbours WHERE context_id = ?
      AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, rank`).raw(),
    // ratio: unmaintained since migration 9 (computed from semantic_docs.threshold when read).
    insertPostings: multiRowInsert(
      db,
      'INSERT INTO semantic_postings (context_id, memory_id, term, weight, ratio)',
      '(?, ?, ?, ?, 0)',
    ),
    insertNeighbours: multiRowInsert(
      db,
      'INSERT INTO semantic_neighbours (context_id, memory_id, rank, neighbour_id, score)',
      '(?, ?, ?, ?, ?)',
    ),
    deletePostings: p('DELETE FROM semantic_postings WHERE context_id = ? AND memory_id = ?'),
    insertNeighbour: p(
      'INSERT INTO semantic_neighbours (context_id, memory_id, rank, neighbour_id, score) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteNeighbours: p('DELETE FROM semantic_neighbours WHERE context_id = ? AND memory_id = ?'),
    listRows: p(
      'SELECT rank, neighbour_id, score FROM semantic_neighbours WHERE context_id = ? AND memory_id = ?',
    ).raw(),
    setNeighbour: p(`UPDATE semantic_neighbours SET neighbour_id = ?, score = ?
      WHERE context_id = ? AND memory_id = ? AND rank = ?`),
    setNeighbourScore: p(
      'UPDATE semantic_neighbours SET score = ? WHERE context_id = ? AND memory_id = ? AND rank = ?',
    ),
    deleteNeighbour: p('DELETE FROM semantic_neighbours WHERE context_id = ? AND memory_id = ? AND rank = ?'),
    referrers: p('SELECT memory_id FROM semantic_neighbours WHERE context_id = ? AND neighbour_id = ?'),
    maxWeight: p('SELECT MAX(weight) AS value FROM semantic_postings WHERE context_id = ? AND term = ?'),
    maxRatio: p(`SELECT MAX(${RATIO}) AS value FROM semantic_postings p JOIN semantic_docs d
      ON d.context_id = p.context_id AND d.memory_id = p.memory_id WHERE p.context_id = ? AND p.term = ?`),
    topPostings: p(`SELECT memory_id, weight FROM semantic_postings WHERE context_id = ? AND term = ?
      ORDER BY weight DESC, memory_id LIMIT ?`).raw(),
    postingsAboveWeight: p(`SELECT memory_id, weight FROM semantic_postings WHERE context_id = ? AND term = ?
      AND weight >= ? AND weight < ? ORDER BY weight DESC, memory_id`).raw(),
    postingsAboveRatio:
      p(`SELECT memory_id, weight, ratio FROM (SELECT p.memory_id, p.weight, ${RATIO} AS ratio
      FROM semantic_postings p JOIN semantic_docs d ON d.context_id = p.context_id AND d.memory_id = p.memory_id
      WHERE p.context_id = ? AND p.term = ?) WHERE ratio >= ? AND ratio < ?`).raw(),
  };
}

/**
 * Refuses a context's semantic state naming what the archive does not hold: an unknown context, or a document
 * of an unknown memory (the postings and list rows of a document carry its id, so its doc row stands for
 * them). Run inside the writing transaction when the foreign-key checks are off.
 */
export function assertKnownDocs(s: SemanticStatements, contextId: string): void {
  if (s.contextKnown.get(contextId) === undefined) {
    throw new GraphmemixError('INVALID_INPUT', `semantic state of unknown context "${contextId}"`);
  }
  const unknown = s.unknownDocMemory.get(contextId) as string | undefined;
  if (unknown !== undefined) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `semantic document of unknown memory "${unknown}" in "${contextId}"`,
    );
  }
}
