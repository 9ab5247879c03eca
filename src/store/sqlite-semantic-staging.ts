import type Database from 'better-sqlite3';
import { multiRowInsert } from './multi-row-insert.ts';
import { listThreshold, type SemanticDoc } from './semantic-index-spec.ts';

/** Suffix of the next staging area's tables: names need only be unique per connection. */
let nextStaging = 0;

/**
 * The staging area of one SQLite staged replace (SemanticIndexStore.stagedReplace): three TEMP tables of the
 * writer's connection. SQLite keeps them in a temp file it has already unlinked, no other connection sees
 * them, and a crash takes them along, so staging changes nothing stored. Rows are appended in stage order
 * (rowid), without indexes: a stage call costs the rows' encoding and an append. `copyInto` then moves them
 * into the semantic tables with one INSERT ... SELECT per table, in stage order: the documents come in id
 * order, so that is primary-key order, and no row is encoded or bound one by one inside the commit (at 100k
 * memories those rows took 2.6 s of the rebuild's one write turn; the copy takes ~0.5 s).
 */
export interface SqliteSemanticStaging {
  /** Appends documents (their thresholds for lists of length k), in one transaction of the temp file only. */
  stage(docs: Iterable<SemanticDoc>): void;
  /**
   * Copies every staged row into the context's semantic tables, inside the caller's transaction. It checks no
   * ids: a caller copying with the foreign keys off checks the written documents after it (assertKnownDocs).
   */
  copyInto(contextId: string): void;
  /** Drops the three tables (outside any transaction of the caller's). */
  drop(): void;
}

/** Where a document's rows go (statements whose leading columns come before the row's own). */
export interface DocRowWriters {
  doc: (values: unknown[]) => void;
  postings: (values: readonly unknown[], rows: number) => void;
  neighbours: (values: readonly unknown[], rows: number) => void;
}

/**
 * A document's rows, each led by `lead` (the semantic tables' context id, or nothing in the staging tables):
 * (memory, threshold for lists of length k, vector JSON), its postings (memory, term, weight) and its list
 * entries (memory, rank, neighbour, score). replaceAll and the staging area write the same rows with it.
 */
export function writeDocRows(
  doc: SemanticDoc,
  k: number,
  lead: readonly unknown[],
  write: DocRowWriters,
): void {
  write.doc([
    ...lead,
    doc.memoryId,
    listThreshold(doc.neighbours, k),
    JSON.stringify([doc.terms, doc.weights]),
  ]);
  const postings: unknown[] = [];
  doc.terms.forEach((term, at) => {
    postings.push(...lead, doc.memoryId, term, doc.weights[at]!);
  });
  write.postings(postings, doc.terms.length);
  const list: unknown[] = [];
  doc.neighbours.forEach((n, rank) => {
    list.push(...lead, doc.memoryId, rank, n.memoryId, n.score);
  });
  write.neighbours(list, doc.neighbours.length);
}

export function createSqliteSemanticStaging(db: Database.Database, k: number): SqliteSemanticStaging {
  const suffix = nextStaging++;
  const docs = `semantic_stage_docs_${suffix}`;
  const postings = `semantic_stage_postings_${suffix}`;
  const neighbours = `semantic_stage_neighbours_${suffix}`;
  db.exec(`
    CREATE TEMP TABLE ${docs} (memory_id TEXT NOT NULL, threshold REAL NOT NULL, vector TEXT NOT NULL);
    CREATE TEMP TABLE ${postings} (memory_id TEXT NOT NULL, term TEXT NOT NULL, weight REAL NOT NULL);
    CREATE TEMP TABLE ${neighbours} (
      memory_id TEXT NOT NULL, rank INTEGER NOT NULL, neighbour_id TEXT NOT NULL, score REAL NOT NULL
    );
  `);
  const insertDoc = db.prepare(`INSERT INTO temp.${docs} (memory_id, threshold, vector) VALUES (?, ?, ?)`);
  const insertPostings = multiRowInsert(
    db,
    `INSERT INTO temp.${postings} (memory_id, term, weight)`,
    '(?, ?, ?)',
  );
  const insertNeighbours = multiRowInsert(
    db,
    `INSERT INTO temp.${neighbours} (memory_id, rank, neighbour_id, score)`,
    '(?, ?, ?, ?)',
  );
  // The same rows replaceAll's insertDoc writes (ratio unmaintained since migration 9: 0).
  const copies = [
    db.prepare(`INSERT INTO main.semantic_docs (context_id, memory_id, threshold, vector)
      SELECT ?, memory_id, threshold, vector FROM temp.${docs} ORDER BY rowid`),
    db.prepare(`INSERT INTO main.semantic_postings (context_id, memory_id, term, weight, ratio)
      SELECT ?, memory_id, term, weight, 0 FROM temp.${postings} ORDER BY rowid`),
    db.prepare(`INSERT INTO main.semantic_neighbours (context_id, memory_id, rank, neighbour_id, score)
      SELECT ?, memory_id, rank, neighbour_id, score FROM temp.${neighbours} ORDER BY rowid`),
  ];
  // Deferred: it writes only the temp file, so it takes no write lock on the archive.
  const writers: DocRowWriters = {
    doc: (values) => insertDoc.run(...values),
    postings: insertPostings,
    neighbours: insertNeighbours,
  };
  const stageAll = db.transaction((given: Iterable<SemanticDoc>) => {
    for (const doc of given) writeDocRows(doc, k, [], writers);
  });
  return {
    stage(given) {
      stageAll.deferred(given);
    },
    copyInto(contextId) {
      for (const copy of copies) copy.run(contextId);
    },
    drop() {
      db.exec(`DROP TABLE IF EXISTS temp.${docs}; DROP TABLE IF EXISTS temp.${postings};
        DROP TABLE IF EXISTS temp.${neighbours};`);
    },
  };
}
