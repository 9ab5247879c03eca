import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { EvalQuestion } from '../../types/question.ts';
import type { MemoryEdge, RelationType } from '../../types/relation.ts';
import type { MemoryView, ViewHit } from '../../types/view.ts';
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
} from '../archive-store-spec.ts';
import type { SemanticIndexStore } from '../semantic-index-spec.ts';
import { integrityProblems } from './postgres-integrity.ts';
import { PostgresKeyReads } from './postgres-key-reads.ts';
import { searchPostgresLexical } from './postgres-lexical-search.ts';
import { META_DELETE, META_PUT } from './postgres-literal-plans.ts';
import { PostgresMemoryReads } from './postgres-memory-reads.ts';
import { PostgresMemoryWrites } from './postgres-memory-writes.ts';
import { hasEmbeddingColumn, migrateClient } from './postgres-migrate.ts';
import { PostgresPostingBatches } from './postgres-posting-batches.ts';
import { PostgresRelations } from './postgres-relations.ts';
import { RLS_ROLE } from './postgres-schema.ts';
import { createPostgresSemanticIndex } from './postgres-semantic-index.ts';
import { asStoreError, createPool, escapeLiteral, PostgresSession, redactUrl } from './postgres-session.ts';
import { PostgresVectors } from './postgres-vectors.ts';

export { FIND_BY_KEYS_SQL } from './postgres-key-reads.ts';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database (libpq URL; `?sslmode=...` etc. pass through to pg). */
  url: string;
  /** Pool size per process (default 10). */
  maxConnections?: number;
  /** Apply migrations on open (default true); false refuses a database that is not at the current schema. */
  migrate?: boolean;
  /**
   * Vectors of one (context, space) above which pgvector's HNSW index serves searchVectors (default
   * APPROXIMATE_VECTOR_THRESHOLD, 20k, the size where the other backends switch to IVF). Below it, exact.
   */
  approximateVectorsAbove?: number;
}

export interface PostgresArchiveStore extends ArchiveStore {
  readonly backend: 'postgres';
  /** 'pgvector' when the extension is usable (HNSW above the exact-size threshold), else 'exact'. */
  readonly vectorSupport: 'pgvector' | 'exact';
  /**
   * Diagnostics (tests, `graphmemix copy` checks): one statement in a READ ONLY transaction scoped to
   * `contextId` through the store's own pool, row-level security applying as to every store call. A
   * deliberately unscoped `SELECT * FROM memories` returns that context's rows only.
   */
  queryInContext(contextId: string, text: string): Promise<Record<string, unknown>[]>;
}

/**
 * Opens (and by default migrates) the graphmemix schema in a PostgreSQL database. Throws STORE when the
 * server cannot be reached, the database belongs to something else or its schema is newer than this code.
 * Only this module (and the migrate command) import `pg`: SQLite users never load it.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresArchiveStore> {
  const where = redactUrl(options.url);
  const pool = createPool(options.url, options.maxConnections ?? 10);
  try {
    const client = await pool.connect();
    let pgvectorOn: boolean;
    let switchRole: boolean;
    try {
      if (options.migrate === false) {
        pgvectorOn = await hasEmbeddingColumn(client);
      } else {
        pgvectorOn = (await migrateClient(client, where)).pgvector;
      }
      const me = await client.query<{ bypass: boolean; role: boolean }>(
        `SELECT (r.rolsuper OR r.rolbypassrls) AS bypass, EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1) AS role
         FROM pg_roles r WHERE r.rolname = current_user`,
        [RLS_ROLE],
      );
      switchRole = me.rows[0]?.bypass ?? false;
      if (switchRole && !me.rows[0]?.role) {
        throw new GraphmemixError(
          'STORE',
          `the login role bypasses row-level security and role ${RLS_ROLE} is missing; run graphmemix migrate as a role that may create it`,
          { location: { file: where } },
        );
      }
    } finally {
      client.release();
    }
    return new PostgresStore(
      new PostgresSession(pool, switchRole, where),
      pgvectorOn,
      options.approximateVectorsAbove,
    );
  } catch (error) {
    await pool.end().catch(() => {});
    throw asStoreError(error, where);
  }
}

class PostgresStore implements PostgresArchiveStore {
  readonly specificationVersion = 'v1' as const;
  readonly backend = 'postgres' as const;
  // A transaction-scoped lock per context (PostgresSession): writers of different contexts never wait.
  readonly independentContextWrites = true;
  readonly vectorSupport: 'pgvector' | 'exact';
  readonly semantic: SemanticIndexStore;
  private readonly vectors: PostgresVectors;
  /** The lexical search's posting batches by read generation (read units only). */
  private readonly postingBatches = new PostgresPostingBatches();
  private readonly reads: PostgresMemoryReads;
  private readonly writes: PostgresMemoryWrites;
  private readonly keyReads: PostgresKeyReads;
  private readonly relations: PostgresRelations;

  constructor(
    private readonly session: PostgresSession,
    pgvectorOn: boolean,
    approximateAbove: number | undefined,
  ) {
    this.vectorSupport = pgvectorOn ? 'pgvector' : 'exact';
    this.semantic = createPostgresSemanticIndex(session);
    this.vectors = new PostgresVectors(session, pgvectorOn, approximateAbove);
    this.reads = new PostgresMemoryReads(session);
    this.writes = new PostgresMemoryWrites(session, this.vectors);
    this.keyReads = new PostgresKeyReads(session);
    this.relations = new PostgresRelations(session);
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

  contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.reads.contextStats(contextId);
  }

  listMemories(
    contextId: string,
    options?: { afterSequence?: number; afterId?: string; limit?: number },
  ): Promise<MemoryRecord[]> {
    return this.reads.listMemories(contextId, options);
  }

  countMemories(contextId: string): Promise<number> {
    return this.reads.countMemories(contextId);
  }

  maxSequence(contextId: string): Promise<number | undefined> {
    return this.reads.maxSequence(contextId);
  }

  getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    return this.reads.getContentHashes(contextId, ids);
  }

  listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.keyReads.listPendingMedia(options);
  }

  heldMediaKeys(keys: readonly string[]): Promise<Set<string>> {
    return this.keyReads.heldMediaKeys(keys);
  }

  findByKeys(
    contextId: string,
    keys: readonly string[],
    options?: { limit?: number },
  ): Promise<MemoryRecord[]> {
    return this.keyReads.findByKeys(contextId, keys, options);
  }

  adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    return this.keyReads.adjacentByKey(contextId, key, position, direction);
  }

  adjacentRunByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
    limit: number,
  ): Promise<MemoryRecord[]> {
    return this.keyReads.adjacentRunByKey(contextId, key, position, direction, limit);
  }

  findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options?: { limit?: number },
  ): Promise<KeyedRecord[]> {
    return this.keyReads.findKeyRange(contextId, from, to, options);
  }

  deleteMemory(contextId: string, id: string): Promise<boolean> {
    return this.writes.deleteMemory(contextId, id);
  }

  deleteContext(contextId: string, options?: ForgetOptions): Promise<boolean> {
    return this.writes.deleteContext(contextId, options);
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

  readGeneration(contextId?: string): string | undefined {
    return contextId === undefined ? undefined : this.session.readGeneration(contextId);
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
    // One transaction per context (each under its own scope); a batch naming several contexts is split.
    const byContext = new Map<string, EvalQuestion[]>();
    for (const question of questions) {
      const list = byContext.get(question.contextId) ?? [];
      list.push(question);
      byContext.set(question.contextId, list);
    }
    for (const [contextId, list] of byContext) {
      const unique = new Map(list.map((question) => [question.id, question]));
      await this.session.scoped(contextId, 'write', (sql) =>
        sql.query(
          `INSERT INTO questions (context_id, id, question) SELECT $1, * FROM unnest($2::text[], $3::text[])
           ON CONFLICT (context_id, id) DO UPDATE SET question = excluded.question`,
          [contextId, [...unique.keys()], [...unique.values()].map((question) => JSON.stringify(question))],
        ),
      );
    }
    return questions.length;
  }

  async listQuestions(contextId?: string): Promise<EvalQuestion[]> {
    const rows =
      contextId === undefined
        ? await this.session.allContexts((sql) =>
            sql.query<{ question: string }>('SELECT question FROM questions ORDER BY ord'),
          )
        : await this.session.scoped(contextId, 'read', (sql) =>
            sql.query<{ question: string }>(
              'SELECT question FROM questions WHERE context_id = $1 ORDER BY ord',
              [contextId],
            ),
          );
    return rows.rows.map((row) => JSON.parse(row.question) as EvalQuestion);
  }

  async searchLexical(contextId: string, query: string, options: LexicalSearchOptions): Promise<ViewHit[]> {
    // Kept posting batches serve searches in a read unit of the context (one snapshot, its generation).
    const batches =
      this.session.currentReadUnit()?.contextId === contextId
        ? this.postingBatches.forSearch(contextId, () => this.session.readGeneration(contextId))
        : undefined;
    return this.session.scoped(contextId, 'read', (sql) =>
      searchPostgresLexical(sql, contextId, query, options, batches),
    );
  }

  /**
   * After a bulk import or a compaction: the planner statistics of the tables it changed, now rather than when
   * autovacuum gets to them, by autovacuum's own rule (rows changed since the last analyze > 50 + 10% of the
   * live rows). Why: right after an import the planner still sees the small tables and picks plans that made
   * a retrieve in a 10k context ~2x slower and an add-1 ~40% slower (bench:postgres, 10k context, quiet:
   * retrieve p50 24.4 -> 12.8 ms, add-1 25.9 -> 18.0 ms). The login role runs it outside RLS (ANALYZE needs
   * the tables' owner; another role gets a warning and nothing changes). No search result changes.
   */
  async optimizeLexicalIndex(_contextId: string): Promise<boolean> {
    return this.session.analyzeChanged();
  }

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    await this.vectors.put(contextId, space, rows);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    return this.vectors.get(contextId, space, memoryIds);
  }

  async searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    return this.vectors.search(contextId, space, query, options);
  }

  async listVectorSpaces(contextId: string): Promise<string[]> {
    return this.session.scoped(contextId, 'read', async (sql) => {
      const rows = await sql.query<{ space: string }>(
        'SELECT DISTINCT space FROM vectors WHERE context_id = $1 ORDER BY space',
        [contextId],
      );
      return rows.rows.map((row) => row.space);
    });
  }

  async listMetaKeys(prefix = ''): Promise<string[]> {
    const rows = await this.session.global((sql) =>
      sql.query<{ key: string }>('SELECT key FROM meta WHERE starts_with(key, $1) ORDER BY key', [prefix]),
    );
    return rows.rows.map((row) => row.key);
  }

  async getMeta<T = unknown>(key: string): Promise<T | undefined> {
    // Inside a unit of work: the value read ahead with its BEGIN, else read and remembered for the next unit.
    // A read unit's read-ahead came with its BEGIN (once the BEGIN went out: a question reads meta late).
    const reading = this.session.currentReadUnit();
    const unit = this.session.currentUnit() ?? reading;
    const ahead = reading ? reading.prefetch : await this.session.currentReadAhead();
    if (ahead?.meta.has(key)) return structuredClone(ahead.meta.get(key)) as T | undefined;
    const rows = await this.session.globalRead((sql) =>
      sql.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]),
    );
    // Learned once read (a key the server refused, a NUL in it, never enters the read-ahead).
    if (unit) this.session.learnedMeta.learn(unit.contextId, key);
    const row = rows.rows[0];
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  async setMeta(key: string, value: unknown): Promise<void> {
    const text =
      value === undefined
        ? META_DELETE.call(escapeLiteral(key))
        : META_PUT.call(escapeLiteral(key), escapeLiteral(JSON.stringify(value)));
    // Inside a unit of work the write is queued (no round trip of its own); its readers there are served
    // from the unit's read-ahead, which takes the new value, or flush it first (any statement does).
    if (!this.session.deferMetaInUnit(key, text)) {
      await this.session.global((sql) =>
        value === undefined
          ? sql.query('DELETE FROM meta WHERE key = $1', [key])
          : sql.query(
              'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
              [key, JSON.stringify(value)],
            ),
      );
    }
    const ahead = this.session.currentUnit()?.prefetch?.meta;
    if (ahead?.has(key)) ahead.set(key, value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
  }

  /**
   * One write transaction for every call of `work` on this context (PostgresSession.unitOfWork). A unit that
   * starts with the records' write (`recordWrite`: an add) is lazy: its BEGIN goes with the write's first
   * statement and its read-ahead (UnitPrefetch) with its first read after the write (with the write's
   * queued counters), so the add and its relation update are one transaction with no round trip of BEGIN or
   * COMMIT between them.
   */
  unitOfWork<T>(contextId: string, work: () => Promise<T>, options?: UnitOfWorkOptions): Promise<T> {
    // A read unit that waits on a model call would hold a pooled connection meanwhile: plain calls then.
    if (options?.read) return options.remote ? work() : this.session.readUnit(contextId, work);
    return this.session.unitOfWork(contextId, work, { lazy: options?.recordWrite === true });
  }

  async integrityCheck(): Promise<{ ok: boolean; problems: string[] }> {
    const problems = await this.session.allContexts((sql) => integrityProblems(sql));
    return { ok: problems.length === 0, problems };
  }

  async queryInContext(contextId: string, text: string): Promise<Record<string, unknown>[]> {
    return this.session.scoped(contextId, 'read', async (sql) => (await sql.query(text)).rows);
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
