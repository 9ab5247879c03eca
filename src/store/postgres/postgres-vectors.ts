import { createHash } from 'node:crypto';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { ViewHit, ViewKind } from '../../types/view.ts';
import type { VectorRow, VectorSearchOptions } from '../archive-store-spec.ts';
import { vectorDimensionError, vectorRowKey } from '../store-rules.ts';
import { APPROXIMATE_VECTOR_THRESHOLD, VectorIndex } from '../vector-index.ts';
import { escapeLiteral, type PostgresSession, type Sql } from './postgres-session.ts';

/** How many (context, space) vector indexes one open store keeps (least recently used is dropped). */
const CACHED_SPACES = 32;

interface VectorDbRow {
  memory_id: string;
  kind: ViewKind;
  key: string;
  vector: Buffer;
}

/**
 * Vectors of the PostgreSQL store. Always stored as float32 bytes (`vectors.vector`, the SQLite layout); with
 * pgvector also as `embedding vector`, and each (space, dims) gets a partial HNSW index (cosine) on
 * `embedding::vector(dims)` created on its first write.
 *
 * Search: a (context, space) of at most APPROXIMATE_VECTOR_THRESHOLD rows is scored exactly here by the
 * shared VectorIndex, cached per process and rebuilt when `contexts.vector_version` moved (any process's
 * write bumps it). Above the threshold: the HNSW index with pgvector's iterative scan (the RLS and context
 * filters apply inside the scan), else VectorIndex's own IVF. Scores are cosines either way.
 */
export class PostgresVectors {
  private readonly cache = new Map<string, { version: number; index: VectorIndex }>();
  private readonly hnswReady = new Set<string>();

  constructor(
    private readonly session: PostgresSession,
    private readonly pgvectorOn: boolean,
    /** Rows of a (context, space) above which pgvector's HNSW index serves the search. */
    private readonly approximateAbove = APPROXIMATE_VECTOR_THRESHOLD,
  ) {}

  async put(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    if (rows.length === 0) return;
    const dims = await this.session.scoped(contextId, 'write', async (sql) => {
      const existing = await sql.query<{ dims: number }>(
        'SELECT dims FROM vectors WHERE context_id = $1 AND space = $2 LIMIT 1',
        [contextId, space],
      );
      const dims = existing.rows[0]?.dims ?? rows[0]!.vector.length;
      for (const row of rows)
        if (row.vector.length !== dims) throw vectorDimensionError(space, dims, row.vector.length);
      const ids = [...new Set(rows.map((row) => row.memoryId))];
      const known = await sql.query<{ id: string }>(
        'SELECT id FROM memories WHERE context_id = $1 AND id = ANY($2::text[])',
        [contextId, ids],
      );
      const knownIds = new Set(known.rows.map((row) => row.id));
      for (const id of ids) {
        if (!knownIds.has(id)) {
          throw new GraphmemixError('INVALID_INPUT', `vector of unknown memory "${id}" in "${contextId}"`);
        }
      }
      // Last write of a (memory, kind, key) wins within one call, as row-by-row upserts would.
      const unique = new Map(rows.map((row) => [vectorRowKey(row), row]));
      const list = [...unique.values()];
      const bytes = list.map((row) =>
        Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength),
      );
      const embedding = this.pgvectorOn ? ', embedding' : '';
      const embeddingValue = this.pgvectorOn ? ', e::vector' : '';
      const embeddingSet = this.pgvectorOn ? ', embedding = excluded.embedding' : '';
      await sql.query(
        `INSERT INTO vectors (context_id, space, memory_id, kind, key, dims, vector${embedding})
         SELECT $1, $2, m, k, y, $3, v${embeddingValue}
         FROM unnest($4::text[], $5::text[], $6::text[], $7::bytea[]${this.pgvectorOn ? ', $8::text[]' : ''})
           AS x(m, k, y, v${this.pgvectorOn ? ', e' : ''})
         ON CONFLICT (context_id, space, memory_id, kind, key)
         DO UPDATE SET dims = excluded.dims, vector = excluded.vector${embeddingSet}`,
        [
          contextId,
          space,
          dims,
          list.map((row) => row.memoryId),
          list.map((row) => row.kind),
          list.map((row) => row.key),
          bytes,
          ...(this.pgvectorOn ? [list.map((row) => toVectorLiteral(row.vector))] : []),
        ],
      );
      await bumpVectorVersion(sql, contextId);
      return dims;
    });
    if (this.pgvectorOn) await this.ensureHnsw(contextId, space, dims);
  }

  async get(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    return this.session.scoped(contextId, 'read', async (sql) => {
      const rows = await sql.query<VectorDbRow>(
        `SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = $1 AND space = $2
         ${memoryIds ? 'AND memory_id = ANY($3::text[])' : ''} ORDER BY memory_id, kind, key`,
        memoryIds ? [contextId, space, [...memoryIds]] : [contextId, space],
      );
      return rows.rows.map(toVectorRow);
    });
  }

  async search(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    if (options.limit <= 0) return [];
    return this.session.scoped(contextId, 'read', async (sql) => {
      const version = await sql.query<{ vector_version: number }>(
        'SELECT vector_version FROM contexts WHERE id = $1',
        [contextId],
      );
      const current = version.rows[0]?.vector_version;
      if (current === undefined) return [];
      if (options.memoryIds !== undefined) {
        // A filtered question's candidate set: exact cosines over just those memories' vectors.
        if (options.memoryIds.length === 0) return [];
        const subset = await sql.query<VectorDbRow>(
          `SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = $1 AND space = $2
           AND memory_id = ANY($3::text[]) ORDER BY memory_id, kind, key`,
          [contextId, space, [...new Set(options.memoryIds)]],
        );
        return subset.rows.length === 0
          ? []
          : new VectorIndex(subset.rows.map(toVectorRow)).search(query, options);
      }
      const key = `${contextId}\u0000${space}`;
      const hit = this.cache.get(key);
      if (hit && hit.version === current) {
        this.cache.delete(key);
        this.cache.set(key, hit);
        return hit.index.search(query, options);
      }
      if (this.pgvectorOn) {
        const large = await sql.query<{ n: number }>(
          `SELECT count(*) AS n FROM (SELECT 1 FROM vectors WHERE context_id = $1 AND space = $2 LIMIT $3) x`,
          [contextId, space, this.approximateAbove + 1],
        );
        if (large.rows[0]!.n > this.approximateAbove)
          return this.searchHnsw(sql, contextId, space, query, options);
      }
      const rows = await sql.query<VectorDbRow>(
        'SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = $1 AND space = $2 ORDER BY memory_id, kind, key',
        [contextId, space],
      );
      if (rows.rows.length === 0) return [];
      const index = new VectorIndex(rows.rows.map(toVectorRow));
      // Inside a unit of work the rows may be uncommitted (and rolled back, the version with them): no cache.
      if (this.session.inUnitOfWork(contextId)) return index.search(query, options);
      this.cache.set(key, { version: current, index });
      if (this.cache.size > CACHED_SPACES) this.cache.delete(this.cache.keys().next().value!);
      return index.search(query, options);
    });
  }

  /** Drops cached indexes of a context (after deleteContext). */
  forget(contextId: string): void {
    for (const key of [...this.cache.keys()])
      if (key.startsWith(`${contextId}\u0000`)) this.cache.delete(key);
  }

  private async searchHnsw(
    sql: Sql,
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    const dimsRow = await sql.query<{ dims: number }>(
      'SELECT dims FROM vectors WHERE context_id = $1 AND space = $2 LIMIT 1',
      [contextId, space],
    );
    const dims = dimsRow.rows[0]!.dims;
    if (query.length !== dims) throw vectorDimensionError(space, dims, query.length);
    const ef = Math.max(40, Math.min(1000, options.limit * 2));
    await sql.query(`SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = ${ef}`);
    const kinds = options.kinds ? [...options.kinds] : undefined;
    // The space is a literal, not a parameter: the HNSW index is partial (WHERE space = '<literal>'), and the
    // generic plans every transaction uses (postgres-session.ts) can only prove that from a literal.
    const rows = await sql.query<{ memory_id: string; kind: ViewKind; key: string; score: number }>(
      `SELECT memory_id, kind, key, 1 - ((embedding::vector(${dims})) <=> $2::vector(${dims})) AS score
       FROM vectors WHERE context_id = $1 AND space = ${escapeLiteral(space)} AND dims = ${dims}
       ${kinds ? 'AND kind = ANY($4::text[])' : ''}
       ORDER BY (embedding::vector(${dims})) <=> $2::vector(${dims}) LIMIT $3`,
      [contextId, toVectorLiteral(query), options.limit, ...(kinds ? [kinds] : [])],
    );
    return rows.rows
      .map((row) => ({ memoryId: row.memory_id, kind: row.kind, key: row.key, rawScore: row.score }))
      .sort(
        (x, y) => y.rawScore - x.rawScore || (x.memoryId < y.memoryId ? -1 : x.memoryId > y.memoryId ? 1 : 0),
      );
  }

  /**
   * The partial HNSW index of a (space, dims), created once (IF NOT EXISTS) outside any scoped transaction,
   * as the login role (index DDL needs the table owner). Failure (no privilege) leaves the exact path.
   * An index that exists already (another process, an earlier run) is found by a catalog read, which waits on
   * no lock. Creating one inside this context's open unit of work is deferred to a later write outside it:
   * CREATE INDEX needs a SHARE lock on `vectors`, and the unit (another connection of this process) holds ROW
   * EXCLUSIVE on it from the insert until it commits, which it does only after this call returns: a process's
   * first vector write into a unit hung forever on an archive it had not created.
   */
  private async ensureHnsw(contextId: string, space: string, dims: number): Promise<void> {
    const name = `vectors_hnsw_${createHash('sha256').update(`${space}\u0000${dims}`).digest('hex').slice(0, 20)}`;
    if (this.hnswReady.has(name)) return;
    const found = await this.session.pool.query<{ present: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS present',
      [name],
    );
    if (found.rows[0]?.present) {
      this.hnswReady.add(name);
      return;
    }
    if (this.session.inUnitOfWork(contextId)) return;
    const literal = escapeLiteral(space);
    try {
      await this.session.pool.query(
        `CREATE INDEX IF NOT EXISTS ${name} ON vectors USING hnsw ((embedding::vector(${dims})) vector_cosine_ops)
         WHERE space = ${literal} AND dims = ${dims}`,
      );
    } catch {
      // No privilege or a concurrent creator: the search falls back to exact scoring until one exists.
    }
    this.hnswReady.add(name);
  }
}

export async function bumpVectorVersion(sql: Sql, contextId: string): Promise<void> {
  await sql.query('UPDATE contexts SET vector_version = vector_version + 1 WHERE id = $1', [contextId]);
}

function toVectorRow(row: VectorDbRow): VectorRow {
  // Copy: the driver's buffer may not be 4-byte aligned, and callers must not share memory with it.
  const bytes = new Uint8Array(row.vector.byteLength);
  bytes.set(row.vector);
  return { memoryId: row.memory_id, kind: row.kind, key: row.key, vector: new Float32Array(bytes.buffer) };
}

/**
 * pgvector's text form ('[1,2,3]'). Written here rather than taken from the `pgvector` npm package: that
 * package declares engines node >= 22, so npm silently skips it as an optional dependency on Node 20.
 */
export function toVectorLiteral(vector: Float32Array): string {
  let text = '[';
  for (let i = 0; i < vector.length; i += 1) {
    const value = vector[i] as number;
    if (!Number.isFinite(value)) {
      throw new GraphmemixError('INVALID_INPUT', `vector component ${i} is not a finite number`);
    }
    text += i === 0 ? `${value}` : `,${value}`;
  }
  return `${text}]`;
}
