import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { OptionalPackage } from '../importers/optional-package.ts';
import { Bm25Index } from '../retrieval/bm25-index.ts';
import { TOKENIZER_VERSION } from '../retrieval/tokenize.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import type { EvalQuestion } from '../types/question.ts';
import type { MemoryEdge, RelationType } from '../types/relation.ts';
import type { MemoryView, ViewHit, ViewKind } from '../types/view.ts';
import type {
  ArchiveStore,
  ContextInfo,
  ContextStats,
  EdgeChange,
  FilteredPage,
  FilterPageOptions,
  ForgetOptions,
  KeyedRecord,
  LexicalSearchOptions,
  MemoryFilter,
  MemoryVersion,
  MemoryWrite,
  PendingMediaRef,
  RelationWork,
  UnitOfWorkOptions,
  VectorRow,
  VectorSearchOptions,
  VersionWindow,
  WriteOutcome,
} from './archive-store-spec.ts';
import { openSqliteDatabase } from './open-sqlite-database.ts';
import type { SemanticIndexStore } from './semantic-index-spec.ts';
import { SemanticPostingsCache } from './semantic-postings-cache.ts';
import type { CheckpointerOptions } from './sqlite-checkpointer.ts';
import { sqliteIntegrityCheck } from './sqlite-integrity-check.ts';
import { SqliteLexicalIndex } from './sqlite-lexical-index.ts';
import { SqliteMemoryReads } from './sqlite-memory-reads.ts';
import { SqliteMemoryWrites } from './sqlite-memory-writes.ts';
import { SqliteReadCache } from './sqlite-read-cache.ts';
import { SqliteRelationKeys } from './sqlite-relation-keys.ts';
import { SqliteRelations } from './sqlite-relations.ts';
import { createSqliteSemanticIndex } from './sqlite-semantic-index.ts';
import { prepareSqliteStoreStatements, type SqliteStoreStatements } from './sqlite-store-statements.ts';
import { SqliteStoredIvf } from './sqlite-stored-ivf.ts';
import { SqliteVectors } from './sqlite-vectors.ts';
import { SqliteWalUpkeep } from './sqlite-wal-upkeep.ts';
import { TOKENIZER_VERSION_META } from './store-rules.ts';
import { UsearchVectorIndexes } from './usearch-vector-index.ts';

export { SQLITE_UNIT_MAX_PENDING } from './sqlite-memory-writes.ts';
export { CHECKPOINTER_SIZE_CHECK_COMMITS } from './sqlite-wal-upkeep.ts';

/**
 * The embedded default backend: one SQLite file (better-sqlite3, WAL, foreign keys on).
 *
 * Durability: every write method is one transaction; WAL with synchronous=NORMAL keeps every committed
 * transaction across a killed process (an OS crash may lose the last few, never corrupt the file).
 * Lexical search: a persistent BM25 index in the same file (src/store/sqlite-lexical-index.ts), updated in the
 * transaction of every memory write/delete, searched top-k with pruning; nothing is rebuilt on open or write.
 * Vector search: an index per context built lazily and cached; `contexts.vector_version` is bumped by every
 * vector write/delete, so a cache built before a write (by this process or another one sharing the file) is
 * rebuilt on the next search (src/store/vector-index.ts: exact, IVF above 20k vectors).
 */
export function createSqliteStore(
  file: string,
  options: {
    readonly?: boolean;
    /** The persistent approximate vector index (tests: a lower threshold, a missing package). */
    ann?: { threshold?: number; load?: () => Promise<OptionalPackage<'usearch'>> };
    /**
     * The stored IVF (sqlite-stored-ivf.ts): rows of a vector space above which it is trained, floats of the
     * lists a process keeps (tests: lower ones).
     */
    ivf?: { threshold?: number; keptFloats?: number };
    /** Rows per step of forgetting a context, fixed (tests: few); default sized to FORGET_STEP_MS. */
    forgetStepRows?: number;
    /** Edges from which a whole-type replacement rebuilds the edge indexes (BULK_EDGE_INDEX_FROM; tests: few). */
    bulkEdgeIndexFrom?: number;
    /**
     * The background WAL checkpointer (sqlite-checkpointer.ts) of a writable file from `fromBytes`
     * (default BACKGROUND_CHECKPOINT_FROM_BYTES); false: none (the writer checkpoints in its commits).
     */
    checkpointer?: CheckpointerOptions | false;
  } = {},
): ArchiveStore {
  return new SqliteStore(openSqliteDatabase(file, options), file, options);
}

class SqliteStore implements ArchiveStore {
  readonly specificationVersion = 'v1' as const;
  readonly backend = 'sqlite';
  /** Absent only for a read-only store of schema 1 (not migrated): then BM25 is built per search. */
  private readonly lexical: SqliteLexicalIndex | undefined;
  private readonly statements: SqliteStoreStatements;
  private readonly keys: SqliteRelationKeys;
  private readonly reads: SqliteMemoryReads;
  private readonly writes: SqliteMemoryWrites;
  private readonly relations: SqliteRelations;
  private readonly vectors: SqliteVectors;
  private readonly wal: SqliteWalUpkeep;
  readonly semantic: SemanticIndexStore;
  /** The semantic index's kept top-n posting reads (semantic-postings-cache.ts). */
  private readonly semanticCache = new SemanticPostingsCache();
  /** Edge lists of memories questions read (sqlite-read-cache.ts). */
  private readonly readCache = new SqliteReadCache();
  /** A deferred transaction around a read (withReadCache). */
  private readonly readTransaction: <T>(work: () => T) => T;

  private readonly ann: UsearchVectorIndexes;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    options: Parameters<typeof createSqliteStore>[1] = {},
  ) {
    this.statements = prepareSqliteStoreStatements(db);
    const transaction = db.transaction((work: () => unknown) => work());
    this.readTransaction = <T>(work: () => T) => transaction(work) as T;
    // An in-memory database has no folder to keep index files in: exact search only.
    this.ann = new UsearchVectorIndexes(db, file === ':memory:' || file === '' ? undefined : file, {
      ...options.ann,
      ...(options.readonly === undefined ? {} : { readonly: options.readonly }),
    });
    this.keys = new SqliteRelationKeys(db);
    this.semantic = createSqliteSemanticIndex(db, (work) => this.run(work), this.semanticCache);
    const indexed = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'lex_fts'").get();
    // Postings made by another tokenizer (a read-only store opened before its migration 7) cannot answer
    // queries tokenized by this one: such a store is searched from its views, like a schema-1 store.
    this.lexical = indexed && termsAreCurrent(db) ? new SqliteLexicalIndex(db) : undefined;
    const run = <T>(work: () => T) => this.run(work);
    this.reads = new SqliteMemoryReads(db, this.statements, run);
    this.vectors = new SqliteVectors(
      db,
      this.statements,
      run,
      this.ann,
      new SqliteStoredIvf(db, options.ivf),
    );
    this.relations = new SqliteRelations(
      db,
      this.statements,
      run,
      (read) => this.withReadCache(read),
      options.bulkEdgeIndexFrom,
    );
    this.writes = new SqliteMemoryWrites(
      db,
      this.statements,
      run,
      this.lexical,
      this.keys,
      this.semanticCache,
      this.ann,
      this.vectors,
      () => this.wal.committed(),
      () => this.wal.truncateWal(),
      options.forgetStepRows,
    );
    this.wal = new SqliteWalUpkeep(db, file, options, run);
  }

  maintenancePause(): Promise<void> {
    return this.wal.maintenancePause();
  }

  async vacuum(): Promise<{ bytesBefore: number; bytesAfter: number }> {
    const size = () => (this.file === ':memory:' || this.file === '' ? 0 : statSync(this.file).size);
    const bytesBefore = size();
    this.run(() => this.db.exec('VACUUM'));
    await this.wal.truncateWal();
    return { bytesBefore, bytesAfter: size() };
  }

  /** After deletes whose journal entries are consumed: the WAL copied into the secure-deleted file and truncated. */
  async eraseDeleted(): Promise<void> {
    await this.wal.truncateWal();
  }

  get vectorSupport(): string {
    return this.ann.describe() === 'usearch' ? 'usearch' : 'stored-ivf';
  }

  listContexts(options?: { afterId?: string; limit?: number }): Promise<ContextInfo[]> {
    return this.reads.listContexts(options);
  }

  writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    return this.writes.writeMemories(contextId, writes);
  }

  getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    return this.reads.getMemory(contextId, id);
  }

  getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    return this.reads.getMemories(contextId, ids);
  }

  listMemories(
    contextId: string,
    options?: { afterSequence?: number; afterId?: string; limit?: number },
  ): Promise<MemoryRecord[]> {
    return this.reads.listMemories(contextId, options);
  }

  matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids: readonly string[] },
  ): Promise<string[]> {
    return this.reads.matchMemories(contextId, filter, options);
  }

  listFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<MemoryRecord>> {
    return this.reads.listFiltered(contextId, filter, page);
  }

  matchFiltered(
    contextId: string,
    filter: MemoryFilter,
    page?: FilterPageOptions,
  ): Promise<FilteredPage<string>> {
    return this.reads.matchFiltered(contextId, filter, page);
  }

  memoryVersions(contextId: string, id: string, window?: VersionWindow): Promise<MemoryVersion[]> {
    return this.reads.memoryVersions(contextId, id, window);
  }

  maxSequence(contextId: string): Promise<number | undefined> {
    return this.reads.maxSequence(contextId);
  }

  countMemories(contextId: string): Promise<number> {
    return this.reads.countMemories(contextId);
  }

  contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.reads.contextStats(contextId);
  }

  getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    return this.reads.getContentHashes(contextId, ids);
  }

  deleteMemory(contextId: string, id: string): Promise<boolean> {
    return this.writes.deleteMemory(contextId, id);
  }

  deleteContext(contextId: string, options?: ForgetOptions): Promise<boolean> {
    return this.writes.deleteContext(contextId, options);
  }

  async isForgetting(contextId: string): Promise<boolean> {
    return this.writes.isForgetting(contextId);
  }

  async forgettingContexts(): Promise<string[]> {
    return this.writes.forgettingContexts();
  }

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    return this.run(() => this.keys.find(contextId, keys, options.limit));
  }

  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.run(() => this.keys.pending(options.limit, options.after));
  }

  async heldMediaKeys(keys: readonly string[]): Promise<Set<string>> {
    return this.run(() => this.keys.heldMedia(keys));
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    return this.run(() => this.keys.adjacent(contextId, key, position, direction));
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    return this.run(() => this.keys.range(contextId, from, to, options.limit));
  }

  getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    return this.reads.getViews(contextId, memoryIds);
  }

  pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    return this.relations.pendingRelationWork(contextId, limit);
  }

  clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    return this.relations.clearRelationWork(contextId, seqs);
  }

  relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    return this.relations.relationWorkStatus(contextId);
  }

  hasRelationWork(contextId: string): Promise<boolean> {
    return this.relations.hasRelationWork(contextId);
  }

  contextsWithRelationWork(): Promise<string[]> {
    return this.relations.contextsWithRelationWork();
  }

  replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    return this.relations.replaceEdges(contextId, types, edges);
  }

  changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    return this.relations.changeEdges(contextId, changes);
  }

  neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return this.relations.neighbors(contextId, memoryIds);
  }

  edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    return this.relations.edgesAmong(contextId, memoryIds);
  }

  countEdges(contextId: string): Promise<Record<RelationType, number>> {
    return this.relations.countEdges(contextId);
  }

  async putQuestions(questions: readonly EvalQuestion[]): Promise<number> {
    this.run(() =>
      this.db
        .transaction(() => {
          for (const question of questions) {
            this.statements.upsertQuestion.run(question.contextId, question.id, JSON.stringify(question));
          }
        })
        .immediate(),
    );
    return questions.length;
  }

  async listQuestions(contextId?: string): Promise<EvalQuestion[]> {
    const rows = this.run(() =>
      contextId === undefined
        ? this.statements.listAllQuestions.all()
        : this.statements.listQuestions.all(contextId),
    ) as { question: string }[];
    return rows.map((row) => JSON.parse(row.question) as EvalQuestion);
  }

  async searchLexical(contextId: string, query: string, options: LexicalSearchOptions): Promise<ViewHit[]> {
    return this.run(() => {
      if (this.lexical) return this.lexical.search(contextId, query, options);
      const documents = this.statements.lexicalDocuments.all(contextId) as LexicalRow[];
      return Bm25Index.build(documents).search(query, options);
    });
  }

  async optimizeLexicalIndex(contextId: string): Promise<boolean> {
    // A read-only handle (a read worker) leaves the file as it is.
    return this.run(() => (this.db.readonly ? false : (this.lexical?.mergeSegments(contextId) ?? false)));
  }

  putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    return this.vectors.putVectors(contextId, space, rows);
  }

  getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    return this.vectors.getVectors(contextId, space, memoryIds);
  }

  searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    return this.vectors.searchVectors(contextId, space, query, options);
  }

  async getMeta<T = unknown>(key: string): Promise<T | undefined> {
    const row = this.run(() => this.statements.getMeta.get(key)) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async listMetaKeys(prefix = ''): Promise<string[]> {
    // A range scan on the primary key: every key >= prefix and < prefix + U+FFFF.
    const rows = this.run(() => this.statements.listMetaKeys.all(prefix, `${prefix}\uffff`)) as {
      key: string;
    }[];
    return rows.map((row) => row.key);
  }

  listVectorSpaces(contextId: string): Promise<string[]> {
    return this.vectors.listVectorSpaces(contextId);
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    this.run(() => {
      if (value === undefined) this.statements.deleteMeta.run(key);
      else this.statements.setMeta.run(key, JSON.stringify(value));
    });
  }

  async integrityCheck(): Promise<{ ok: boolean; problems: string[] }> {
    return this.run(() => sqliteIntegrityCheck(this.db));
  }

  unitOfWork<T>(contextId: string, work: () => Promise<T>, options?: UnitOfWorkOptions): Promise<T> {
    return this.writes.unitOfWork(contextId, work, options);
  }

  async close(): Promise<void> {
    // The checkpointer's connection first: this one stays the last, so closing it still checkpoints and
    // removes the WAL as before.
    await this.wal.close();
    if (this.db.open) this.db.close();
    this.vectors.clear();
    this.ann.close();
  }

  /**
   * Runs `read` with the read cache validated for it, both in ONE read transaction: the generation and the
   * rows read on a miss come from one snapshot, and the WAL read lock (most of a small statement's cost) is
   * taken once. Inside a caller's transaction `read` gets no cache (a unit of work may see rows its rollback
   * removes).
   */
  private withReadCache<T>(read: (cache: SqliteReadCache | undefined) => T): T {
    return this.run(() => {
      if (this.db.inTransaction) return read(undefined);
      return this.readTransaction(() => {
        this.readCache.validate(this.generationNow());
        return read(this.readCache);
      });
    });
  }

  readGeneration(): string | undefined {
    if (!this.db.open || this.db.inTransaction) return undefined;
    return this.generationNow();
  }

  private generationNow(): string {
    const { changes, version } = this.statements.writeGeneration.get() as {
      changes: number;
      version: number;
    };
    return `${changes}:${version}`;
  }

  /** Runs a database call, mapping a closed handle and SQLite failures to STORE / INVALID_INPUT errors. */
  private run<T>(work: () => T): T {
    if (!this.db.open)
      throw new GraphmemixError('STORE', 'the store is closed', { location: { file: this.file } });
    try {
      return work();
    } catch (error) {
      throw asStoreError(error, this.file);
    }
  }
}

interface LexicalRow {
  memoryId: string;
  kind: ViewKind;
  key: string;
  text: string;
}

/** Whether the stored terms were made by this tokenizer (one meta row, read once per connection). */
function termsAreCurrent(db: Database.Database): boolean {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(TOKENIZER_VERSION_META) as
    | { value: string }
    | undefined;
  return row !== undefined && Number(JSON.parse(row.value)) === TOKENIZER_VERSION;
}

function asStoreError(error: unknown, file: string): unknown {
  if (error instanceof GraphmemixError) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT')) {
    return new GraphmemixError('INVALID_INPUT', `store constraint failed: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    return new GraphmemixError('STORE', `store failure: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return error;
}
