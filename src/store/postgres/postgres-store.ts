import type pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { EvalQuestion } from '../../types/question.ts';
import type { MemoryEdge, RelationType } from '../../types/relation.ts';
import type { MemoryView, ViewHit, ViewKind } from '../../types/view.ts';
import type {
  ArchiveStore,
  ContextInfo,
  ContextStats,
  EdgeChange,
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
  WriteOutcome,
} from '../archive-store-spec.ts';
import { MEDIA_PENDING_KEY } from '../archive-store-spec.ts';
import { diffEdgeReplacement, emptyEdgeCounts } from '../edge-merge.ts';
import type { SemanticIndexStore } from '../semantic-index-spec.ts';
import { assertWrite } from '../store-rules.ts';
import { BatchedReads } from './postgres-batched-reads.ts';
import { PostgresEdges } from './postgres-edges.ts';
import { integrityProblems } from './postgres-integrity.ts';
import { PostgresLexicalBatch } from './postgres-lexical-index.ts';
import { searchPostgresLexical } from './postgres-lexical-search.ts';
import {
  CLEAR_JOURNAL,
  EDGE_COUNTS,
  META_DELETE,
  META_PUT,
  STORED_HASHES,
  WRITE_COUNTERS,
} from './postgres-literal-plans.ts';
import { hasEmbeddingColumn, migrateClient } from './postgres-migrate.ts';
import { RLS_ROLE } from './postgres-schema.ts';
import { listFiltered, matchFiltered, statsOf, versionsOf, writeHistoryAndTags } from './postgres-scopes.ts';
import { createPostgresSemanticIndex } from './postgres-semantic-index.ts';
import {
  asStoreError,
  createPool,
  escapeLiteral,
  PostgresSession,
  redactUrl,
  type Sql,
} from './postgres-session.ts';
import { bumpVectorVersion, PostgresVectors } from './postgres-vectors.ts';

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
  readonly vectorSupport: 'pgvector' | 'exact';
  readonly semantic: SemanticIndexStore;
  private readonly vectors: PostgresVectors;
  private readonly edges = new PostgresEdges();
  /** adjacentByKey reads issued together run as one statement (a key chain's update asks several). */
  private readonly adjacent: BatchedReads<AdjacentRead, MemoryRecord[]>;
  /** findByKeys of one key, issued together: one statement (the supersedes listers of every dirty memory). */
  private readonly keyGroups: BatchedReads<{ key: string; limit: number | null }, MemoryRecord[]>;

  constructor(
    private readonly session: PostgresSession,
    pgvectorOn: boolean,
    approximateAbove: number | undefined,
  ) {
    this.vectorSupport = pgvectorOn ? 'pgvector' : 'exact';
    this.semantic = createPostgresSemanticIndex(session);
    this.vectors = new PostgresVectors(session, pgvectorOn, approximateAbove);
    this.adjacent = new BatchedReads(session, adjacentRecords);
    this.keyGroups = new BatchedReads(session, keyGroupRecords);
  }

  async listContexts(options: { afterId?: string; limit?: number } = {}): Promise<ContextInfo[]> {
    return this.session.allContexts(async (sql) => {
      // Keyset page over the contexts primary key (NULL: from the start / no limit).
      const rows = await sql.query<{ id: string; memories: number; max: number | null }>(
        `SELECT c.id, c.memories, (SELECT max(m.sequence) FROM memories m WHERE m.context_id = c.id) AS max
         FROM contexts c WHERE ($1::text IS NULL OR c.id > $1) ORDER BY c.id LIMIT $2`,
        [options.afterId ?? null, options.limit ?? null],
      );
      return rows.rows.map((row) =>
        row.max === null
          ? { id: row.id, memories: row.memories }
          : { id: row.id, memories: row.memories, maxSequence: row.max },
      );
    });
  }

  async writeMemories(contextId: string, writes: MemoryWrite[]): Promise<WriteOutcome> {
    for (const write of writes) assertWrite(contextId, write);
    const ids = [...new Set(writes.map((write) => write.record.id))];
    const literal = escapeLiteral(contextId);
    // Round trips are most of an add's cost: statements that do not depend on each other's results share
    // one statement (data-modifying CTEs; foreign keys are checked at the end of the statement), the first
    // one rides with BEGIN (primary-key reads: the literal plans as well as a parameter) and the counters
    // with COMMIT.
    const first = STORED_HASHES.call(literal, `ARRAY[${ids.map(escapeLiteral).join(', ')}]::text[]`);
    return this.session.scoped(
      contextId,
      'write',
      async (sql, tx) => {
        const stored = tx.first as pg.QueryResult<{ id: string; content_hash: string; record: string }>;
        // The batch is applied in order in memory first (an id written twice sees its first write), then
        // written with one statement per table.
        const storedIds = new Set(stored.rows.map((row) => row.id));
        const current = new Map(
          stored.rows.map((row) => [row.id, { hash: row.content_hash, record: row.record }]),
        );
        const outcome: WriteOutcome = { inserted: [], updated: [], unchanged: [] };
        const journal: { id: string; before: string | null }[] = [];
        const final = new Map<string, MemoryWrite>();
        const keyed = new Map<string, readonly string[]>();
        // The stored record each update replaces, for the memory's history (first write of the batch wins).
        const history = new Map<string, string>();
        for (const write of writes) {
          const { record, contentHash, keys } = write;
          const previous = current.get(record.id);
          if (previous?.hash === contentHash) {
            if (keys) keyed.set(record.id, keys);
            outcome.unchanged.push(record.id);
            continue;
          }
          journal.push({ id: record.id, before: previous ? previous.record : null });
          if (previous) {
            if (!history.has(record.id) && storedIds.has(record.id)) history.set(record.id, previous.record);
            outcome.updated.push(record.id);
          } else outcome.inserted.push(record.id);
          current.set(record.id, { hash: contentHash, record: JSON.stringify(record) });
          final.set(record.id, write);
          keyed.set(record.id, keys ?? []);
        }
        const lexical = new PostgresLexicalBatch(sql, contextId);
        if (final.size > 0) {
          const touched = [...final.keys()].filter((id) => storedIds.has(id));
          if (touched.length > 0) {
            await sql.query(
              `WITH v AS (DELETE FROM views WHERE context_id = $1 AND memory_id = ANY($2::text[]))
             DELETE FROM vectors WHERE context_id = $1 AND memory_id = ANY($2::text[])`,
              [contextId, touched],
            );
            await lexical.remove(touched);
          }
          // Keys of memories new to the store go in the records' statement (nothing to replace first).
          const fresh = [...keyed.keys()].every((id) => !storedIds.has(id) && final.has(id));
          const keyRows = fresh ? keyRowsOf(keyed, (id) => final.get(id)!.record.sequence) : undefined;
          for (const write of final.values()) lexical.add(write.views);
          const records = () => writeRecords(sql, contextId, [...final.values()], journal, current, keyRows);
          // Nothing replaced: the records' statement and the lexical one read nothing of each other, so they
          // are issued together (one round trip, pipelined), in this order (the documents need the records).
          if (touched.length === 0) await Promise.all([records(), lexical.flush()]);
          else await records().then(() => lexical.flush());
          if (fresh) keyed.clear();
        }
        await this.writeKeys(sql, contextId, keyed, current, storedIds);
        await writeHistoryAndTags(
          sql,
          contextId,
          history,
          [...final.values()].map((write) => write.record),
        );
        if (outcome.inserted.length > 0 || outcome.updated.length > 0) {
          tx.defer(
            WRITE_COUNTERS.call(
              literal,
              String(outcome.inserted.length),
              outcome.updated.length > 0 ? '1' : '0',
              escapeLiteral(new Date().toISOString()),
            ),
          );
        }
        return outcome;
      },
      { first },
    );
  }

  /** Replaces the relation keys of the given memories (sequence copied from their final records). */
  private async writeKeys(
    sql: Sql,
    contextId: string,
    keyed: Map<string, readonly string[]>,
    current: Map<string, { record: string }>,
    storedIds: ReadonlySet<string>,
  ): Promise<void> {
    if (keyed.size === 0) return;
    // A memory that was not stored before this call has no keys to drop.
    const existing = [...keyed.keys()].filter((id) => storedIds.has(id));
    if (existing.length > 0) {
      await sql.query('DELETE FROM memory_keys WHERE context_id = $1 AND memory_id = ANY($2::text[])', [
        contextId,
        existing,
      ]);
    }
    const { ids, keys, sequences } = keyRowsOf(
      keyed,
      (id) => (JSON.parse(current.get(id)!.record) as MemoryRecord).sequence,
    );
    if (ids.length === 0) return;
    await sql.query(
      `INSERT INTO memory_keys (context_id, memory_id, key, sequence)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[]) ON CONFLICT DO NOTHING`,
      [contextId, ids, keys, sequences],
    );
  }

  async getMemory(contextId: string, id: string): Promise<MemoryRecord | undefined> {
    return (await this.getMemories(contextId, [id]))[0];
  }

  async getMemories(contextId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    if (ids.length === 0) return [];
    // The journaled memories' records, read ahead by the unit of work (UnitPrefetch).
    const ahead = (await this.session.readAhead(contextId))?.journal?.records;
    if (ahead && ids.every((id) => ahead.has(id))) {
      return ids.flatMap((id) => {
        const record = ahead.get(id);
        return record ? [structuredClone(record)] : [];
      });
    }
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ id: string; record: string }>(
        'SELECT id, record FROM memories WHERE context_id = $1 AND id = ANY($2::text[])',
        [contextId, [...new Set(ids)]],
      ),
    );
    const byId = new Map(rows.rows.map((row) => [row.id, row.record]));
    return ids.flatMap((id) => {
      const record = byId.get(id);
      return record === undefined ? [] : [JSON.parse(record) as MemoryRecord];
    });
  }

  async matchMemories(
    contextId: string,
    filter: MemoryFilter,
    options: { ids?: readonly string[]; limit?: number },
  ): Promise<string[]> {
    return this.session.scoped(contextId, 'read', (sql) => matchFiltered(sql, contextId, filter, options));
  }

  async memoryVersions(contextId: string, id: string): Promise<MemoryVersion[]> {
    return this.session.scoped(contextId, 'read', (sql) => versionsOf(sql, contextId, id));
  }

  async contextStats(contextId: string): Promise<ContextStats | undefined> {
    return this.session.scoped(contextId, 'read', (sql) => statsOf(sql, contextId));
  }

  async listMemories(
    contextId: string,
    options: { afterSequence?: number; afterId?: string; limit?: number; filter?: MemoryFilter } = {},
  ): Promise<MemoryRecord[]> {
    if (options.filter !== undefined) {
      const { filter, ...page } = options;
      return this.session.scoped(contextId, 'read', (sql) => listFiltered(sql, contextId, filter, page));
    }
    const after = options.afterSequence ?? null;
    const afterId = options.afterSequence === undefined ? null : (options.afterId ?? null);
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ record: string }>(
        `SELECT record FROM memories WHERE context_id = $1
         AND ($2::bigint IS NULL OR sequence > $2 OR (sequence = $2 AND $3::text IS NOT NULL AND id > $3))
         ORDER BY sequence, id LIMIT $4`,
        [contextId, after, afterId, options.limit ?? null],
      ),
    );
    return rows.rows.map((row) => JSON.parse(row.record) as MemoryRecord);
  }

  async countMemories(contextId: string): Promise<number> {
    const ahead = (await this.session.readAhead(contextId))?.memories;
    if (ahead !== undefined) return ahead;
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ n: number }>('SELECT memories AS n FROM contexts WHERE id = $1', [contextId]),
    );
    return rows.rows[0]?.n ?? 0;
  }

  async maxSequence(contextId: string): Promise<number | undefined> {
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ n: number | null }>('SELECT max(sequence) AS n FROM memories WHERE context_id = $1', [
        contextId,
      ]),
    );
    return rows.rows[0]?.n ?? undefined;
  }

  async getContentHashes(contextId: string, ids: readonly string[]): Promise<Map<string, string>> {
    const hashes = new Map<string, string>();
    if (ids.length === 0) return hashes;
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ id: string; content_hash: string }>(
        'SELECT id, content_hash FROM memories WHERE context_id = $1 AND id = ANY($2::text[])',
        [contextId, [...new Set(ids)]],
      ),
    );
    const byId = new Map(rows.rows.map((row) => [row.id, row.content_hash]));
    for (const id of ids) if (byId.has(id)) hashes.set(id, byId.get(id)!);
    return hashes;
  }

  /** Cross-context on purpose (the media queue's recovery at open): the explicit allContexts path. */
  async listPendingMedia(options: { limit: number; after?: PendingMediaRef }): Promise<PendingMediaRef[]> {
    return this.session.allContexts(async (sql) => {
      // The literal matches the partial index memory_keys_media_pending (version 5).
      const rows = await sql.query<PendingMediaRef>(
        `SELECT context_id AS "contextId", memory_id AS id FROM memory_keys
         WHERE key = '${MEDIA_PENDING_KEY}' AND (context_id, memory_id) > ($1, $2)
         ORDER BY context_id, memory_id LIMIT $3`,
        [options.after?.contextId ?? '', options.after?.id ?? '', options.limit],
      );
      return rows.rows.map((row) => ({ contextId: row.contextId, id: row.id }));
    });
  }

  async findByKeys(
    contextId: string,
    keys: readonly string[],
    options: { limit?: number } = {},
  ): Promise<MemoryRecord[]> {
    if (keys.length === 0) return [];
    const unique = [...new Set(keys)];
    // One key (what the relation updates ask, often many at once): batched with the others issued together.
    if (unique.length === 1) {
      return this.keyGroups.read(contextId, { key: unique[0]!, limit: options.limit ?? null });
    }
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ record: string }>(FIND_BY_KEYS_SQL, [contextId, unique, options.limit ?? null]),
    );
    return rows.rows.map((row) => JSON.parse(row.record) as MemoryRecord);
  }

  async adjacentByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
  ): Promise<MemoryRecord | undefined> {
    const [record] = await this.adjacent.read(contextId, {
      key,
      sequence: position.sequence,
      id: position.id,
      direction,
      limit: 1,
    });
    return record;
  }

  async adjacentRunByKey(
    contextId: string,
    key: string,
    position: { sequence: number; id: string },
    direction: 'before' | 'after',
    limit: number,
  ): Promise<MemoryRecord[]> {
    if (!Number.isInteger(limit) || limit < 0) {
      throw new GraphmemixError('INVALID_INPUT', 'limit must be a non-negative integer', {
        location: { field: 'limit' },
      });
    }
    if (limit === 0) return [];
    return this.adjacent.read(contextId, {
      key,
      sequence: position.sequence,
      id: position.id,
      direction,
      limit,
    });
  }

  async findKeyRange(
    contextId: string,
    from: string,
    to: string,
    options: { limit?: number } = {},
  ): Promise<KeyedRecord[]> {
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ key: string; record: string }>(
        `SELECT k.key, m.record FROM memory_keys k JOIN memories m ON m.context_id = k.context_id AND m.id = k.memory_id
         WHERE k.context_id = $1 AND k.key >= $2 AND k.key <= $3 ORDER BY k.key, k.memory_id LIMIT $4`,
        [contextId, from, to, options.limit ?? null],
      ),
    );
    return rows.rows.map((row) => ({ key: row.key, record: JSON.parse(row.record) as MemoryRecord }));
  }

  async deleteMemory(contextId: string, id: string): Promise<boolean> {
    return this.session.scoped(contextId, 'write', async (sql) => {
      const removed = await sql.query<{ record: string }>(
        'SELECT record FROM memories WHERE context_id = $1 AND id = $2',
        [contextId, id],
      );
      const before = removed.rows[0];
      if (!before) return false;
      const batch = new PostgresLexicalBatch(sql, contextId);
      await batch.remove([id]);
      await batch.flush();
      // A word seen in this memory alone has df 1 in the frozen snapshot, which is also what it assumes for
      // a word it never saw: dropping those rows changes no score and keeps no forgotten word.
      // Its semantic postings and list go too (explicit since migration 8; the df subquery sees the
      // postings as they were before the statement). The snapshot row is written with them: its version
      // tells other processes' kept posting lists that they changed (postgres-postings-cache.ts).
      await sql.query(
        `WITH p AS (DELETE FROM semantic_postings WHERE context_id = $1 AND memory_id = $2),
         n AS (DELETE FROM semantic_neighbours WHERE context_id = $1 AND memory_id = $2),
         s AS (UPDATE semantic_snapshots SET changes = changes WHERE context_id = $1)
         DELETE FROM semantic_df WHERE context_id = $1 AND df <= 1 AND term IN
           (SELECT term FROM semantic_postings WHERE context_id = $1 AND memory_id = $2)`,
        [contextId, id],
      );
      // Views, vectors, keys, edges (their counts by trigger) and the semantic document cascade.
      await sql.query('DELETE FROM memories WHERE context_id = $1 AND id = $2', [contextId, id]);
      await sql.query('INSERT INTO relation_journal (context_id, memory_id, before) VALUES ($1, $2, $3)', [
        contextId,
        id,
        before.record,
      ]);
      await sql.query('UPDATE contexts SET memories = memories - 1, last_write = $2 WHERE id = $1', [
        contextId,
        new Date().toISOString(),
      ]);
      await bumpVectorVersion(sql, contextId);
      return true;
    });
  }

  async deleteContext(contextId: string): Promise<boolean> {
    const deleted = await this.session.scoped(contextId, 'write', async (sql) => {
      // What a context owns, and how each goes (extend with every new per-context table): memories cascade
      // from contexts (views, vectors, keys, edges, lexical docs, semantic docs cascade from memories;
      // semantic_snapshots from contexts); the rest has no foreign key and is deleted explicitly here
      // (lexical postings and semantic postings / lists since migration 8). Meta keys are global and stay.
      // memory_versions and memory_tags cascade from memories; kind_counts has no foreign key.
      for (const table of [
        'relation_journal',
        'edge_counts',
        'kind_counts',
        'lex_fields',
        'lex_df',
        'lex_postings',
        'semantic_df',
        'semantic_postings',
        'semantic_neighbours',
      ]) {
        await sql.query(`DELETE FROM ${table} WHERE context_id = $1`, [contextId]);
      }
      const questions = await sql.query('DELETE FROM questions WHERE context_id = $1', [contextId]);
      const contexts = await sql.query('DELETE FROM contexts WHERE id = $1', [contextId]);
      return (questions.rowCount ?? 0) + (contexts.rowCount ?? 0) > 0;
    });
    this.vectors.forget(contextId);
    return deleted;
  }

  async getViews(contextId: string, memoryIds: readonly string[]): Promise<MemoryView[]> {
    if (memoryIds.length === 0) return [];
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ memory_id: string; kind: ViewKind; key: string; text: string; uri: string | null }>(
        `SELECT memory_id, kind, key, text, uri FROM views WHERE context_id = $1 AND memory_id = ANY($2::text[])
         ORDER BY memory_id, position`,
        [contextId, [...new Set(memoryIds)]],
      ),
    );
    const byMemory = new Map<string, MemoryView[]>();
    for (const row of rows.rows) {
      const view: MemoryView = { memoryId: row.memory_id, kind: row.kind, key: row.key, text: row.text };
      if (row.uri !== null) view.uri = row.uri;
      const list = byMemory.get(row.memory_id) ?? [];
      list.push(view);
      byMemory.set(row.memory_id, list);
    }
    return memoryIds.flatMap((id) => (byMemory.get(id) ?? []).map((view) => ({ ...view })));
  }

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    const prefetch = await this.session.readAhead(contextId);
    const ahead = prefetch?.journal;
    if (ahead && ahead.entries.length <= limit) {
      // Served once (the records stay for getMemories); a second call reads the table.
      prefetch.journal = { entries: [], records: ahead.records };
      prefetch.journalStatus = undefined;
      if (ahead.entries.length > 0) return ahead.entries;
    }
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ seq: number; memory_id: string; before: string | null }>(
        'SELECT seq, memory_id, before FROM relation_journal WHERE context_id = $1 ORDER BY seq LIMIT $2',
        [contextId, Math.max(0, limit)],
      ),
    );
    return rows.rows.map((row) =>
      row.before === null
        ? { seq: row.seq, memoryId: row.memory_id }
        : { seq: row.seq, memoryId: row.memory_id, before: JSON.parse(row.before) as MemoryRecord },
    );
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    if (Array.isArray(seqs) && seqs.length === 0) return;
    if (
      Array.isArray(seqs) &&
      seqs.every((seq) => Number.isSafeInteger(seq)) &&
      this.session.deferInUnit(
        contextId,
        CLEAR_JOURNAL.call(escapeLiteral(contextId), `'{${seqs.join(',')}}'`),
      )
    ) {
      // Queued in the unit (sent with its next statement or its COMMIT); journal reads ahead are stale now.
      const prefetch = this.session.prefetchFor(contextId);
      if (prefetch) prefetch.journalStatus = prefetch.journal = undefined;
      return;
    }
    await this.session.scoped(contextId, 'write', (sql) =>
      Array.isArray(seqs)
        ? sql.query('DELETE FROM relation_journal WHERE context_id = $1 AND seq = ANY($2::bigint[])', [
            contextId,
            seqs,
          ])
        : sql.query('DELETE FROM relation_journal WHERE context_id = $1 AND seq <= $2', [
            contextId,
            (seqs as { through: number }).through,
          ]),
    );
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    const ahead = (await this.session.readAhead(contextId))?.journalStatus;
    if (ahead) return { ...ahead };
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ n: number; last: number | null }>(
        'SELECT count(*) AS n, max(seq) AS last FROM relation_journal WHERE context_id = $1',
        [contextId],
      ),
    );
    const row = rows.rows[0]!;
    return row.last === null ? { pending: row.n } : { pending: row.n, lastSeq: row.last };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    await this.session.serialEdgeWrite(contextId, () =>
      this.session.scoped(contextId, 'write', async (sql) => {
        const existing = await this.edges.all(sql, contextId);
        await this.edges.write(sql, contextId, diffEdgeReplacement(contextId, existing, types, edges));
      }),
    );
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.session.serialEdgeWrite(contextId, () =>
      this.session.scoped(
        contextId,
        'write',
        (sql) => this.edges.change(sql, contextId, changes, this.session.unitEdges(contextId)),
        // Edges and their counts only: nothing a unit reads ahead; the unit's edge knowledge takes the diff.
        { keepsPrefetch: true, keepsEdges: true },
      ),
    );
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    if (memoryIds.length === 0) return [];
    return this.session.scoped(contextId, 'read', async (sql) => {
      // Inside a unit, a later changeEdges of pairs touching these ids needs no read of them (unless an edge
      // write was issued while this read ran: UnitEdges.learn).
      const known = this.session.unitEdges(contextId);
      const mark = known?.writeMark() ?? 0;
      const edges = await this.edges.touching(sql, contextId, memoryIds);
      known?.learn(memoryIds, edges, mark);
      return edges;
    });
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    // One round trip (a primary-key read): it follows every add (the ingest report). Inside a unit of the
    // context it waits for the unit's next statement or its COMMIT (an add asks at the unit's end).
    const statement = (literal: string) => EDGE_COUNTS.call(literal);
    type Row = { type: RelationType; n: number };
    const rows = await (this.session.readLater<Row>(contextId, statement) ??
      this.session.scopedOne<Row>(contextId, statement));
    const counts = emptyEdgeCounts();
    for (const row of rows) if (row.type in counts) counts[row.type] = row.n;
    return counts;
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
    return this.session.scoped(contextId, 'read', (sql) =>
      searchPostgresLexical(sql, contextId, query, options),
    );
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
    const unit = this.session.currentUnit();
    const ahead = await this.session.currentReadAhead();
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

/**
 * findByKeys: $1 context, $2 keys, $3 limit (null: all). Shaped so that only the key index can drive it: the
 * key rows come first (a key row's sequence is its memory's, writeKeys), then each record by primary key in
 * a LATERAL subquery that its LIMIT keeps from being flattened into a join. The former
 * `memories WHERE id IN (keys) ORDER BY sequence LIMIT $3` let the planner walk the whole context in sequence
 * order (the LIMIT looks cheap), checking each memory's keys: ~1 s per call at 1,000 memories in a context
 * new since the last ANALYZE, the bulk-ingest stall of issue #11. Exported for the test of its plan
 * (test/store/postgres-specifics.test.ts).
 */
export const FIND_BY_KEYS_SQL = `SELECT m.record FROM
    (SELECT DISTINCT ON (k.sequence, k.memory_id) k.memory_id, k.sequence FROM memory_keys k
     WHERE k.context_id = $1 AND k.key = ANY($2::text[]) ORDER BY k.sequence, k.memory_id LIMIT $3) hit
  CROSS JOIN LATERAL
    (SELECT record, sequence, id FROM memories WHERE context_id = $1 AND id = hit.memory_id LIMIT 1) m
  ORDER BY m.sequence, m.id`;

/** memory_keys rows (a memory's distinct keys, with its sequence) of the keyed memories. */
function keyRowsOf(
  keyed: ReadonlyMap<string, readonly string[]>,
  sequenceOf: (id: string) => number,
): KeyRows {
  const rows: KeyRows = { ids: [], keys: [], sequences: [] };
  for (const [id, list] of keyed) {
    const sequence = sequenceOf(id);
    for (const key of new Set(list)) {
      rows.ids.push(id);
      rows.keys.push(key);
      rows.sequences.push(sequence);
    }
  }
  return rows;
}

interface KeyRows {
  ids: string[];
  keys: string[];
  sequences: number[];
}

/**
 * The journal entries, the records and their views of one write, in one statement; with `keys`, the
 * relation keys of memories new to the store too (their foreign key is checked at the statement's end).
 */
async function writeRecords(
  sql: Sql,
  contextId: string,
  writes: readonly MemoryWrite[],
  journal: readonly { id: string; before: string | null }[],
  current: ReadonlyMap<string, { record: string }>,
  keys?: KeyRows,
): Promise<void> {
  const view = {
    ids: [] as string[],
    positions: [] as number[],
    kinds: [] as string[],
    keys: [] as string[],
    texts: [] as string[],
    uris: [] as (string | null)[],
  };
  for (const write of writes) {
    write.views.forEach((v, position) => {
      view.ids.push(write.record.id);
      view.positions.push(position);
      view.kinds.push(v.kind);
      view.keys.push(v.key);
      view.texts.push(v.text);
      view.uris.push(v.uri ?? null);
    });
  }
  await sql.query(
    `WITH j AS (INSERT INTO relation_journal (context_id, memory_id, before)
       SELECT $1, m, b FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS x(m, b, n) ORDER BY n),
     m AS (INSERT INTO memories (context_id, id, sequence, kind, session_id, round_id, "timestamp", content_hash, record)
       SELECT $1, * FROM unnest($4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[])
       ON CONFLICT (context_id, id) DO UPDATE SET sequence = excluded.sequence, kind = excluded.kind,
         session_id = excluded.session_id, round_id = excluded.round_id, "timestamp" = excluded."timestamp",
         content_hash = excluded.content_hash, record = excluded.record),
     k AS (INSERT INTO memory_keys (context_id, memory_id, key, sequence)
       SELECT $1, * FROM unnest($18::text[], $19::text[], $20::bigint[]) ON CONFLICT DO NOTHING)
     INSERT INTO views (context_id, memory_id, position, kind, key, text, uri)
     SELECT $1, * FROM unnest($12::text[], $13::integer[], $14::text[], $15::text[], $16::text[], $17::text[])`,
    [
      contextId,
      journal.map((entry) => entry.id),
      journal.map((entry) => entry.before),
      writes.map((w) => w.record.id),
      writes.map((w) => w.record.sequence),
      writes.map((w) => w.record.kind),
      writes.map((w) => w.record.sessionId ?? null),
      writes.map((w) => w.record.roundId ?? null),
      writes.map((w) => w.record.timestamp ?? null),
      writes.map((w) => w.contentHash),
      writes.map((w) => current.get(w.record.id)!.record),
      view.ids,
      view.positions,
      view.kinds,
      view.keys,
      view.texts,
      view.uris,
      keys?.ids ?? [],
      keys?.keys ?? [],
      keys?.sequences ?? [],
    ],
  );
}

interface AdjacentRead {
  key: string;
  sequence: number;
  id: string;
  direction: 'before' | 'after';
  limit: number;
}

/**
 * The `limit` records before / after each (sequence, id) place in its key's chain, nearest first, one
 * statement for all: per request one of two index range scans on memory_keys (context, key, sequence,
 * memory id) with its LIMIT (the other branch is switched off by a one-time filter), then each record by
 * primary key.
 */
async function adjacentRecords(
  sql: Sql,
  contextId: string,
  reads: readonly AdjacentRead[],
): Promise<MemoryRecord[][]> {
  const rows = await sql.query<{ n: number; record: string }>(
    `SELECT r.n, m.record
     FROM unnest($2::text[], $3::bigint[], $4::text[], $5::boolean[], $6::bigint[])
       WITH ORDINALITY AS r(key, seq, id, before, lim, n)
     CROSS JOIN LATERAL (
       (SELECT b.memory_id, row_number() OVER (ORDER BY b.sequence DESC, b.memory_id DESC) AS step
        FROM (SELECT k.memory_id, k.sequence FROM memory_keys k
              WHERE r.before AND k.context_id = $1 AND k.key = r.key
                AND (k.sequence, k.memory_id) < (r.seq, r.id COLLATE "C")
              ORDER BY k.sequence DESC, k.memory_id DESC LIMIT r.lim) b)
       UNION ALL
       (SELECT f.memory_id, row_number() OVER (ORDER BY f.sequence, f.memory_id) AS step
        FROM (SELECT k.memory_id, k.sequence FROM memory_keys k
              WHERE NOT r.before AND k.context_id = $1 AND k.key = r.key
                AND (k.sequence, k.memory_id) > (r.seq, r.id COLLATE "C")
              ORDER BY k.sequence, k.memory_id LIMIT r.lim) f)) a
     JOIN memories m ON m.context_id = $1 AND m.id = a.memory_id
     ORDER BY r.n, a.step`,
    [
      contextId,
      reads.map((r) => r.key),
      reads.map((r) => r.sequence),
      reads.map((r) => r.id),
      reads.map((r) => r.direction === 'before'),
      reads.map((r) => r.limit),
    ],
  );
  const out: MemoryRecord[][] = reads.map(() => []);
  for (const row of rows.rows) out[row.n - 1]!.push(JSON.parse(row.record) as MemoryRecord);
  return out;
}

/**
 * findByKeys of one key per request, one statement for all: each request is the key index's range scan in
 * (sequence, memory id) order with its LIMIT (one key: no duplicates to remove), then each record by primary
 * key; rows come back grouped by request in (sequence, id) order, as FIND_BY_KEYS_SQL returns them.
 */
async function keyGroupRecords(
  sql: Sql,
  contextId: string,
  reads: ReadonlyArray<{ key: string; limit: number | null }>,
): Promise<MemoryRecord[][]> {
  const rows = await sql.query<{ n: number; record: string }>(
    `SELECT r.n, m.record
     FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY AS r(key, lim, n)
     CROSS JOIN LATERAL (SELECT k.memory_id FROM memory_keys k WHERE k.context_id = $1 AND k.key = r.key
       ORDER BY k.sequence, k.memory_id LIMIT r.lim) hit
     CROSS JOIN LATERAL (SELECT record, sequence, id FROM memories WHERE context_id = $1 AND id = hit.memory_id
       LIMIT 1) m
     ORDER BY r.n, m.sequence, m.id`,
    [contextId, reads.map((r) => r.key), reads.map((r) => r.limit)],
  );
  const out: MemoryRecord[][] = reads.map(() => []);
  for (const row of rows.rows) out[row.n - 1]!.push(JSON.parse(row.record) as MemoryRecord);
  return out;
}
