import type Database from 'better-sqlite3';
import { termCounts } from '../retrieval/bm25-index.ts';
import { tokenize } from '../retrieval/tokenize.ts';
import type { MemoryView, ViewHit, ViewKind } from '../types/view.ts';
import type { LexicalSearchOptions } from './archive-store-spec.ts';
import { dictionaryKey } from './lexical-dictionary-key.ts';
import { multiRowInsert } from './multi-row-insert.ts';
import {
  bucketToken,
  IMPACT_BUCKETS,
  impactBucket,
  lexicalIndexWritten,
  searchLexicalIndex,
} from './search-lexical-index.ts';

/** FTS5's 'automerge' when lex_fts_config has no row for it. */
const FTS5_DEFAULT_AUTOMERGE = 4;

/**
 * The persistent lexical index of the SQLite store: exact BM25 per (context, view kind) with top-k pruning,
 * maintained in the caller's write transaction. Postings live in FTS5 (its segment merging makes a 500-record
 * write ~20x cheaper than one B-tree row per posting, and its doclists are ~10x smaller), but FTS5 only
 * stores them: statistics, scoring and pruning are ours, because FTS5's bm25() uses another IDF, table-wide
 * statistics and reads every matching doclist (docs/store-lexical-index.md has the measurements).
 *
 * - lex_fields: one row per (context, view kind) = a BM25 "field" with its document count and total length;
 *   reference_length is the average length of the batch that created the field, fixed forever (see bucket).
 * - lex_terms: a global dictionary term -> integer id (never shrinks; ids are permanent). It stores
 *   `dictionaryKey(term)`, a hash, not the word: the dictionary outlives forgotten memories (other processes
 *   cache ids, so entries cannot be dropped safely), and a forgotten user's words must not stay readable.
 * - lex_term_stats: documents per (field, term, impact bucket); df is their sum.
 * - lex_docs: one row per indexed view (own id, never reused, stable across VACUUM unlike a views rowid)
 *   with memory id, key, length and the forward list as a uint32 blob [doc id, length, term id, tf, ...]: the
 *   random access of the search (one column, read with pluck) and what a delete needs.
 * - lex_fts: contentless FTS5 (rowid = lex_docs id, detail=none) over synthetic ASCII tokens
 *   "f<field>t<term>b<bucket>": the bucket is the term's BM25 tf-part at the field's reference length,
 *   quantised to IMPACT_BUCKETS steps. A term's doclist is thereby split by impact, so the search reads the
 *   best buckets first and every unread bucket is bounded by its upper edge (impact-ordered postings).
 *
 * Nothing is ever rebuilt from the views: opening or writing costs the same at 1k or 1M memories.
 */
export const LEXICAL_SCHEMA_SQL = `
  CREATE TABLE lex_fields (
    id INTEGER PRIMARY KEY,
    context_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    docs INTEGER NOT NULL DEFAULT 0,
    total_length INTEGER NOT NULL DEFAULT 0,
    reference_length REAL NOT NULL,
    UNIQUE (context_id, kind)
  );
  CREATE TABLE lex_terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
  CREATE TABLE lex_term_stats (
    field INTEGER NOT NULL,
    term INTEGER NOT NULL,
    bucket INTEGER NOT NULL,
    docs INTEGER NOT NULL,
    PRIMARY KEY (field, term, bucket)
  ) WITHOUT ROWID;
  CREATE TABLE lex_docs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    field INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    key TEXT NOT NULL,
    length INTEGER NOT NULL,
    terms BLOB NOT NULL
  );
  CREATE INDEX lex_docs_by_memory ON lex_docs (memory_id, field);
  CREATE VIRTUAL TABLE lex_fts USING fts5(
    tokens, content = '', contentless_delete = 1, detail = none, tokenize = 'ascii'
  );
`;

/** A lex_docs.terms blob: [doc id, length, term id, tf, term id, tf, ...] as little-endian uint32. */
export function encodeForward(doc: number, length: number, pairs: readonly number[]): Buffer {
  return Buffer.from(Uint32Array.from([doc, length, ...pairs]).buffer);
}

/** The (term id, tf) pairs of a forward blob; readUInt32LE since the blob may be unaligned. */
export function decodeForward(blob: Buffer): number[] {
  const pairs: number[] = new Array((blob.length >> 2) - 2);
  for (let i = 0; i < pairs.length; i++) pairs[i] = blob.readUInt32LE(8 + i * 4);
  return pairs;
}

interface FieldRef {
  id: number;
  referenceLength: number;
}

interface PendingViews {
  contextId: string;
  memoryId: string;
  views: MemoryView[];
}

/**
 * Estimated bytes of the term ids a connection learns (termBytes per entry); ids are permanent, so the cache
 * never goes stale, and it is dropped whole past this budget: ~250k typical words.
 */
export const TERM_CACHE_BYTES = 24 << 20;

/** A learnt term: the map entry and the term string (2 bytes a character at most). */
function termBytes(term: string): number {
  return 2 * term.length + 72;
}

export class SqliteLexicalIndex {
  private readonly s: ReturnType<typeof prepareLexicalStatements>;
  private forgetDocRows: Database.Statement | undefined;
  private forgetStatCutoff: Database.Statement | undefined;
  private forgetStatsUpTo: Database.Statement | undefined;
  private readonly termIds = new Map<string, number>();
  private termIdBytes = 0;
  private readonly fields = new Map<string, FieldRef>();
  /** Learnt inside the current write transaction: kept only once it commits (a rollback would reuse ids). */
  private pendingTerms = new Map<string, number>();
  private pendingFields = new Map<string, FieldRef>();
  private pendingViews = new Map<string, PendingViews>();
  /** field -> (term * IMPACT_BUCKETS + bucket) -> change of its document count in this batch. */
  private statDeltas = new Map<number, Map<number, number>>();
  private fieldDeltas = new Map<number, { docs: number; length: number }>();

  constructor(
    private readonly db: Database.Database,
    private readonly termBudget = TERM_CACHE_BYTES,
  ) {
    this.s = prepareLexicalStatements(db);
  }

  /** Starts a write batch (inside the caller's transaction); forgets what an aborted batch learnt. */
  begin(): void {
    this.pendingTerms = new Map();
    this.pendingFields = new Map();
    this.pendingViews = new Map();
    this.statDeltas = new Map();
    this.fieldDeltas = new Map();
  }

  /** Queues a memory's views; they are tokenized and written by flush(). */
  addViews(contextId: string, memoryId: string, views: readonly MemoryView[]): void {
    const key = `${contextId}\u0000${memoryId}`;
    let pending = this.pendingViews.get(key);
    if (!pending) {
      pending = { contextId, memoryId, views: [] };
      this.pendingViews.set(key, pending);
    }
    for (const view of views) if (view.text !== '') pending.views.push(view);
  }

  /** Removes a memory's documents (queued ones included): postings, df and field statistics. */
  removeMemory(contextId: string, memoryId: string): void {
    this.pendingViews.delete(`${contextId}\u0000${memoryId}`);
    const docs = this.s.docsOfMemory.all(memoryId, contextId) as {
      id: number;
      field: number;
      length: number;
      terms: Buffer;
      ref: number;
    }[];
    for (const doc of docs) {
      const pairs = decodeForward(doc.terms);
      for (let i = 0; i < pairs.length; i += 2) {
        this.addStat(doc.field, pairs[i]!, impactBucket(pairs[i + 1]!, doc.length, doc.ref), -1);
      }
      this.addFieldDelta(doc.field, -1, -doc.length);
      this.s.deleteDoc.run(doc.id);
      this.s.deleteTokens.run(doc.id);
    }
  }

  /**
   * A step of forgetting a context in steps (sqlite-context-forget.ts): the FTS5 and lex_docs rows of at most
   * `limit` documents of its memories, in memory id order from `from` (removed documents are gone, so the next
   * step starts at the last memory reached). `finished` when fewer than `limit` were left.
   */
  forgetDocs(
    contextId: string,
    from: string,
    limit: number,
  ): { removed: number; last: string; finished: boolean } {
    this.forgetDocRows ??= this.db
      .prepare(`SELECT m.id, d.id FROM memories m JOIN lex_docs d ON d.memory_id = m.id
        WHERE m.context_id = ? AND m.id >= ? AND d.field IN (SELECT id FROM lex_fields WHERE context_id = ?)
        ORDER BY m.id LIMIT ?`)
      .raw();
    const rows = this.forgetDocRows.all(contextId, from, contextId, limit) as [string, number][];
    if (rows.length === 0) return { removed: 0, last: from, finished: true };
    // FTS5 counts each contentless delete as a written leaf and pays for it with merge work at the flush,
    // so a step of thousands of deletes rewrote whole segments (0.2-0.5 s steps at 100k, up to 5.9 s at 1M).
    // Automerge is off while this step's deletes flush (setting a config value flushes first) and back on
    // before the commit, in the same transaction; the forget's merge stage (mergeStep) does the work
    // in bounded pieces afterwards.
    const automerge = (this.s.ftsConfig.get('automerge') as number | undefined) ?? FTS5_DEFAULT_AUTOMERGE;
    this.s.setFtsConfig.run('automerge', 0);
    for (const [, id] of rows) {
      this.s.deleteTokens.run(id);
      this.s.deleteDoc.run(id);
    }
    this.s.setFtsConfig.run('automerge', automerge);
    return { removed: rows.length, last: rows.at(-1)?.[0] ?? from, finished: rows.length < limit };
  }

  /**
   * At most `pages` leaf pages of FTS5 merge work (its 'merge' command: levels of `usermerge` segments, or one
   * whose deleted rows passed `deletemerge`), inside the caller's transaction. False when there was nothing
   * to merge. Reading the rows a forget deleted is cheap (100k deleted documents, 6.3 MB: one call, 41 ms);
   * the pages bound what is written.
   */
  mergeStep(pages: number): boolean {
    const before = this.s.totalChanges.get() as number;
    this.s.merge.run(pages);
    // FTS5's own test for "did any work": total_changes moves by at least 2 (its structure record).
    return (this.s.totalChanges.get() as number) - before >= 2;
  }

  /**
   * A step of forgetting a context: at most about `limit` rows of its fields' statistics (whole terms: a term's
   * buckets go together). `finished` when none are left; then the fields are emptied (their ids and reference
   * lengths stay valid for a later write to the same context id).
   */
  forgetStats(contextId: string, limit: number): { removed: number; finished: boolean } {
    this.forgetStatCutoff ??= this.db
      .prepare('SELECT term FROM lex_term_stats WHERE field = ? ORDER BY term LIMIT 1 OFFSET ?')
      .pluck();
    this.forgetStatsUpTo ??= this.db.prepare('DELETE FROM lex_term_stats WHERE field = ? AND term <= ?');
    const fields = this.s.fieldsOfContext.all(contextId) as { id: number }[];
    let removed = 0;
    for (const field of fields) {
      this.statDeltas.delete(field.id);
      this.fieldDeltas.delete(field.id);
      if (removed >= limit) return { removed, finished: false };
      const cutoff = this.forgetStatCutoff.get(field.id, limit - removed - 1) as number | undefined;
      if (cutoff !== undefined) {
        removed += this.forgetStatsUpTo.run(field.id, cutoff).changes;
        return { removed, finished: false };
      }
      removed += this.s.deleteFieldStats.run(field.id).changes;
    }
    for (const field of fields) this.s.emptyField.run(field.id);
    return { removed, finished: true };
  }

  /** Writes the queued documents and the aggregated statistics; call last in the transaction. */
  flush(): void {
    const docs: { pending: PendingViews; view: MemoryView; counts: Map<string, number>; length: number }[] =
      [];
    const newTerms = new Set<string>();
    for (const pending of this.pendingViews.values()) {
      for (const view of pending.views) {
        const tokens = tokenize(view.text);
        if (tokens.length === 0) continue;
        const counts = termCounts(tokens);
        for (const term of counts.keys()) if (this.termId(term) === undefined) newTerms.add(term);
        docs.push({ pending, view, counts, length: tokens.length });
      }
    }
    this.resolveTerms(newTerms);
    this.createFields(
      docs.map((d) => ({ contextId: d.pending.contextId, kind: d.view.kind, length: d.length })),
    );
    // Ids are assigned here (inside the write transaction) so the forward blob can carry its own id; from the
    // AUTOINCREMENT sequence, so a deleted document's id (an FTS5 rowid) is never reused.
    let nextId = (this.s.lastDoc.get() as { seq: number } | undefined)?.seq ?? 0;
    // Documents go in multi-row INSERTs (in document order, as one row a statement did). Their FTS5 rows stay
    // one a statement: multi-row INSERTs into FTS5 stored the same postings in other segments (lex_fts_data
    // 164 blocks instead of 163 at 10k), i.e. a different file.
    const docRows: unknown[] = [];
    for (const doc of docs) {
      const field = this.field(doc.pending.contextId, doc.view.kind)!;
      const pairs: number[] = [];
      const tokens: string[] = [];
      for (const [term, tf] of doc.counts) {
        const id = this.termId(term)!;
        const bucket = impactBucket(tf, doc.length, field.referenceLength);
        pairs.push(id, tf);
        tokens.push(bucketToken(field.id, id, bucket));
        this.addStat(field.id, id, bucket, 1);
      }
      const id = ++nextId;
      const forward = encodeForward(id, doc.length, pairs);
      docRows.push(id, field.id, doc.pending.memoryId, doc.view.key, doc.length, forward);
      this.s.insertTokens.run(id, tokens.join(' '));
      this.addFieldDelta(field.id, 1, doc.length);
    }
    this.s.insertDocs(docRows, docRows.length / 6);
    // In primary-key order (field, term, bucket): a batch's few thousand rows go to neighbouring leaf pages
    // one after another instead of to random pages of a table that grows with the archive.
    // Additions (an import's only kind) go in multi-row upserts; a removal may empty its row, so it goes alone.
    const added: number[] = [];
    for (const field of [...this.statDeltas.keys()].sort(ascending)) {
      const deltas = this.statDeltas.get(field)!;
      for (const key of [...deltas.keys()].sort(ascending)) {
        const delta = deltas.get(key)!;
        if (delta === 0) continue;
        const term = Math.floor(key / IMPACT_BUCKETS);
        const bucket = key % IMPACT_BUCKETS;
        if (delta > 0) {
          added.push(field, term, bucket, delta);
          continue;
        }
        this.s.addStat.run(field, term, bucket, delta);
        this.s.dropEmptyStat.run(field, term, bucket);
      }
    }
    this.s.addStats(added, added.length / 4);
    for (const [field, delta] of this.fieldDeltas) this.s.addFieldStats.run(delta.docs, delta.length, field);
    this.pendingViews = new Map();
    this.statDeltas = new Map();
    this.fieldDeltas = new Map();
  }

  /** The batch's transaction committed: what it learnt is now true for good. */
  commit(): void {
    // Cached postings pages and statistics of this connection's searches are out of date now.
    lexicalIndexWritten(this.db);
    for (const [term, id] of this.pendingTerms) this.learn(term, id);
    for (const [key, field] of this.pendingFields) this.fields.set(key, field);
    this.pendingTerms = new Map();
    this.pendingFields = new Map();
  }

  /**
   * An enclosing transaction (SqliteStore.unitOfWork) rolled back after batches of it had committed as
   * savepoints: term ids and fields learnt since may name rows that are gone (and whose ids will be reused),
   * so everything learnt is forgotten (ids are read again on use) and cached search pages are dropped.
   */
  rolledBack(): void {
    lexicalIndexWritten(this.db);
    this.termIds.clear();
    this.termIdBytes = 0;
    this.fields.clear();
    this.begin();
  }

  /** Top `limit` hits per view kind, exactly Bm25Index.search over the context's current views. */
  search(contextId: string, query: string, options: LexicalSearchOptions): ViewHit[] {
    // Ids a search reads are committed and permanent: cached like those a write learns, so a warm process
    // hashes and looks up each query term once (dictionaryKey is a sha256).
    return searchLexicalIndex(this.db, this.termIds, contextId, query, options, (term, id) => {
      this.learn(term, id);
    });
  }

  /**
   * Merges the FTS5 postings into one segment ('optimize') after `contextId`'s bulk write or compaction, when
   * that context holds at least half of the index's documents; returns whether it merged. Each question reads
   * its doclist pages through ~6-15 MATCH statements, and FTS5 looks a token up in every segment: merging the
   * 4 segments of a 10k bulk import took a page read from ~20 to ~13 us CPU, 5 segments at 1M from ~26 to
   * ~20 us (optimize: 35 ms at 10k, 7.9 s at 1M). The postings are rewritten, not changed: same rowids per
   * token, so every search answers the same. The index is shared by all contexts, so a merge costs the whole
   * index: the half rule keeps the merges of many contexts imported one after another geometric (a context of
   * 1k among 1M never merges; automerge keeps the segment count bounded meanwhile). Its own transaction.
   */
  mergeSegments(contextId: string): boolean {
    const sizes = this.s.documentCounts.get(contextId) as { context: number | null; total: number | null };
    if (!sizes.context || (sizes.total ?? 0) > 2 * sizes.context) return false;
    this.db.transaction(() => this.s.optimize.run())();
    lexicalIndexWritten(this.db);
    return true;
  }

  /** Estimated bytes of the learnt term ids (tests). */
  get termCacheBytes(): number {
    return this.termIdBytes;
  }

  /** Keeps a committed term id, within the term budget (TERM_CACHE_BYTES). */
  private learn(term: string, id: number): void {
    if (this.termIds.has(term)) return;
    const bytes = termBytes(term);
    if (this.termIdBytes + bytes > this.termBudget) {
      this.termIds.clear();
      this.termIdBytes = 0;
    }
    this.termIds.set(term, id);
    this.termIdBytes += bytes;
  }

  private termId(term: string): number | undefined {
    return this.termIds.get(term) ?? this.pendingTerms.get(term);
  }

  private resolveTerms(terms: Set<string>): void {
    if (terms.size === 0) return;
    const byKey = new Map([...terms].map((term) => [dictionaryKey(term), term]));
    const rows = this.s.termIds.all(JSON.stringify([...byKey.keys()])) as { term: string; id: number }[];
    for (const row of rows) {
      const term = byKey.get(row.term)!;
      this.pendingTerms.set(term, row.id);
      terms.delete(term);
    }
    for (const term of terms) {
      this.pendingTerms.set(term, Number(this.s.insertTerm.run(dictionaryKey(term)).lastInsertRowid));
    }
  }

  private field(contextId: string, kind: ViewKind): FieldRef | undefined {
    const key = `${contextId}\u0000${kind}`;
    const known = this.fields.get(key) ?? this.pendingFields.get(key);
    if (known) return known;
    const row = this.s.getField.get(contextId, kind) as { id: number; reference_length: number } | undefined;
    if (!row) return undefined;
    const field = { id: row.id, referenceLength: row.reference_length };
    this.pendingFields.set(key, field);
    return field;
  }

  /** New fields take the average length of their first batch as reference (fixed: postings depend on it). */
  private createFields(docs: readonly { contextId: string; kind: ViewKind; length: number }[]): void {
    const missing = new Map<string, { contextId: string; kind: ViewKind; docs: number; length: number }>();
    for (const doc of docs) {
      const key = `${doc.contextId}\u0000${doc.kind}`;
      if (!missing.has(key) && this.field(doc.contextId, doc.kind)) continue;
      const entry = missing.get(key) ?? { contextId: doc.contextId, kind: doc.kind, docs: 0, length: 0 };
      entry.docs++;
      entry.length += doc.length;
      missing.set(key, entry);
    }
    for (const [key, entry] of missing) {
      const referenceLength = entry.length / entry.docs;
      const id = Number(this.s.createField.run(entry.contextId, entry.kind, referenceLength).lastInsertRowid);
      this.pendingFields.set(key, { id, referenceLength });
    }
  }

  private addStat(field: number, term: number, bucket: number, delta: number): void {
    let deltas = this.statDeltas.get(field);
    if (!deltas) {
      deltas = new Map();
      this.statDeltas.set(field, deltas);
    }
    const key = term * IMPACT_BUCKETS + bucket;
    deltas.set(key, (deltas.get(key) ?? 0) + delta);
  }

  private addFieldDelta(field: number, docs: number, length: number): void {
    const delta = this.fieldDeltas.get(field) ?? { docs: 0, length: 0 };
    delta.docs += docs;
    delta.length += length;
    this.fieldDeltas.set(field, delta);
  }
}

function ascending(x: number, y: number): number {
  return x - y;
}

/** Indexes every view of a store written before the index existed (migration 2: explicit upgrade work). */
export function backfillLexicalIndex(db: Database.Database): void {
  const index = new SqliteLexicalIndex(db);
  const page = db.prepare(`SELECT rowid, context_id AS contextId, memory_id AS memoryId, kind, key, text
    FROM views WHERE rowid > ? AND text != '' ORDER BY rowid LIMIT 5000`);
  let after = -1;
  for (;;) {
    const rows = page.all(after) as (MemoryView & { rowid: number; contextId: string })[];
    if (rows.length === 0) return;
    index.begin();
    for (const row of rows) {
      index.addViews(row.contextId, row.memoryId, [
        { memoryId: row.memoryId, kind: row.kind, key: row.key, text: row.text },
      ]);
    }
    index.flush();
    index.commit();
    after = rows[rows.length - 1]!.rowid;
  }
}

/**
 * Rebuilds the whole lexical index from the stored views with the current tokenizer (a migration after a
 * TOKENIZER_VERSION change: every stored term may have changed). Field rows keep their ids and reference
 * lengths (ids are cached by other connections; the reference length only places postings in buckets),
 * their statistics restart from zero; the term dictionary keeps its old entries (ids are permanent).
 */
export function reindexLexicalIndex(db: Database.Database): void {
  db.exec(`
    DELETE FROM lex_term_stats;
    DELETE FROM lex_docs;
    UPDATE lex_fields SET docs = 0, total_length = 0;
    INSERT INTO lex_fts (lex_fts) VALUES ('delete-all');
  `);
  backfillLexicalIndex(db);
}

function prepareLexicalStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  return {
    getField: p('SELECT id, reference_length FROM lex_fields WHERE context_id = ? AND kind = ?'),
    createField: p('INSERT INTO lex_fields (context_id, kind, reference_length) VALUES (?, ?, ?)'),
    addFieldStats: p('UPDATE lex_fields SET docs = docs + ?, total_length = total_length + ? WHERE id = ?'),
    termIds: p('SELECT term, id FROM lex_terms WHERE term IN (SELECT value FROM json_each(?))'),
    insertTerm: p('INSERT INTO lex_terms (term) VALUES (?)'),
    addStat: p(`INSERT INTO lex_term_stats (field, term, bucket, docs) VALUES (?, ?, ?, ?)
      ON CONFLICT (field, term, bucket) DO UPDATE SET docs = docs + excluded.docs`),
    addStats: multiRowInsert(
      db,
      'INSERT INTO lex_term_stats (field, term, bucket, docs)',
      '(?, ?, ?, ?)',
      'ON CONFLICT (field, term, bucket) DO UPDATE SET docs = docs + excluded.docs',
    ),
    dropEmptyStat: p('DELETE FROM lex_term_stats WHERE field = ? AND term = ? AND bucket = ? AND docs <= 0'),
    lastDoc: p("SELECT seq FROM sqlite_sequence WHERE name = 'lex_docs'"),
    insertDocs: multiRowInsert(
      db,
      'INSERT INTO lex_docs (id, field, memory_id, key, length, terms)',
      '(?, ?, ?, ?, ?, ?)',
    ),
    deleteDoc: p('DELETE FROM lex_docs WHERE id = ?'),
    fieldsOfContext: p('SELECT id FROM lex_fields WHERE context_id = ?'),
    deleteFieldStats: p('DELETE FROM lex_term_stats WHERE field = ?'),
    emptyField: p('UPDATE lex_fields SET docs = 0, total_length = 0 WHERE id = ?'),
    docsOfMemory: p(`SELECT d.id AS id, d.field AS field, d.length AS length, d.terms AS terms,
      f.reference_length AS ref FROM lex_docs d JOIN lex_fields f ON f.id = d.field
      WHERE d.memory_id = ? AND f.context_id = ?`),
    insertTokens: p('INSERT INTO lex_fts (rowid, tokens) VALUES (?, ?)'),
    // contentless_delete: FTS5 drops the row's postings itself (no need to replay its tokens).
    deleteTokens: p('DELETE FROM lex_fts WHERE rowid = ?'),
    documentCounts: p(`SELECT sum(docs) FILTER (WHERE context_id = ?) AS context, sum(docs) AS total
      FROM lex_fields`),
    optimize: p("INSERT INTO lex_fts (lex_fts) VALUES ('optimize')"),
    ftsConfig: p('SELECT v FROM lex_fts_config WHERE k = ?').pluck(),
    // FTS5 takes integer settings only (a JS number binds as REAL).
    setFtsConfig: p('INSERT INTO lex_fts (lex_fts, rank) VALUES (?, CAST(? AS INTEGER))'),
    merge: p("INSERT INTO lex_fts (lex_fts, rank) VALUES ('merge', CAST(? AS INTEGER))"),
    totalChanges: p('SELECT total_changes()').pluck(),
  };
}
