import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';
import { pairKey } from './edge-merge.ts';
import { lazyStatement } from './lazy-statement.ts';
import type { SqliteStoreStatements } from './sqlite-store-statements.ts';
import type { SqliteStoredIvf } from './sqlite-stored-ivf.ts';
import { vectorDimensionError, vectorRowKey } from './store-rules.ts';
import type { UsearchVectorIndexes } from './usearch-vector-index.ts';
import { VectorIndex } from './vector-index.ts';

/** How many contexts keep a cached vector index per open store (least recently used is dropped). */
const CACHED_CONTEXTS = 32;

/** A (context, space)'s search index at a `contexts.vector_version`. */
interface CachedIndex {
  version: number;
  index: VectorIndex;
  /** Rows were applied since it was built: it may still hold rows removed since (checked per search). */
  caughtUp: boolean;
}

/**
 * The SQLite store's vectors: rows per (context, space), searched through the approximate index files when
 * they answer (usearch-vector-index.ts), else through the space's stored IVF once it holds more than 20k rows
 * (sqlite-stored-ivf.ts: centroids and list numbers in the archive, trained by writes), else through an exact
 * index per context built lazily and cached while `contexts.vector_version` stays (vector-index.ts).
 */
export class SqliteVectors {
  private readonly vectorCache = new Map<string, CachedIndex>();
  /** Rows written after a version (`changed`, migration 10), at most `limit`. */
  private readonly vectorsSince: Database.Statement;
  /** A deferred transaction around a read (a savepoint inside a write). */
  private readonly snapshot: <T>(work: () => T) => T;
  /** The stored rows of some memories, in listVectors' order. */
  private readonly vectorsOf: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly statements: SqliteStoreStatements,
    private readonly run: <T>(work: () => T) => T,
    private readonly ann: UsearchVectorIndexes,
    private readonly ivf: SqliteStoredIvf,
  ) {
    this.snapshot = db.transaction(<T>(work: () => T) => work()) as <T>(work: () => T) => T;
    this.vectorsSince = lazyStatement(
      db,
      `SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ? AND changed > ?
       ORDER BY changed, memory_id, kind, key LIMIT ?`,
    );
    this.vectorsOf = lazyStatement(
      db,
      `SELECT memory_id, kind, key, vector FROM vectors WHERE context_id = ? AND space = ?
       AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, kind, key`,
    );
  }

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    if (rows.length === 0) return;
    const s = this.statements;
    // usearch's files answer large spaces where the package loads; the stored IVF serves the others.
    const annServes = await this.ann.serves();
    this.run(() =>
      this.db
        .transaction(() => {
          const existing = s.spaceDims.get(contextId, space) as { dims: number } | undefined;
          const dims = existing?.dims ?? rows[0]!.vector.length;
          // Rows carry the version that wrote them (the approximate index reads what is newer than its file).
          s.bumpVectorVersion.run(contextId);
          const version = (s.vectorVersion.get(contextId) as { vector_version: number } | undefined)
            ?.vector_version;
          const trained = this.ivf.current(contextId, space);
          for (const row of rows) {
            if (row.vector.length !== dims) throw vectorDimensionError(space, dims, row.vector.length);
            if (!s.getHash.get(contextId, row.memoryId)) {
              throw new GraphmemixError(
                'INVALID_INPUT',
                `vector of unknown memory "${row.memoryId}" in "${contextId}"`,
              );
            }
            const blob = Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength);
            const list = trained === undefined ? null : this.ivf.listOf(trained, row.vector);
            s.upsertVector.run(
              contextId,
              space,
              row.memoryId,
              row.kind,
              row.key,
              dims,
              blob,
              version ?? 0,
              list,
            );
          }
          // A space just trained is searched through its stored IVF: its in-process index is dead weight.
          if (!annServes && this.ivf.maybeTrain(contextId, space))
            this.vectorCache.delete(pairKey(contextId, space));
        })
        .immediate(),
    );
    await this.ann.afterWrite(contextId, space);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    // Some memories' rows are read by their key (a kNN refill reads its owners'), not by walking the space.
    const rows = this.run(() =>
      memoryIds === undefined
        ? this.statements.listVectors.all(contextId, space)
        : this.vectorsOf.all(contextId, space, JSON.stringify([...new Set(memoryIds)])),
    ) as VectorDbRow[];
    return rows.map(toVectorRow);
  }

  async searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    const version = this.run(() => this.vectorVersion(contextId));
    if (version === undefined) return [];
    const approximate = await this.ann.search(contextId, space, version, query, options);
    if (approximate) return approximate;
    return this.run(() => {
      // One read snapshot: the centroids, the lists and the rows caught up from agree even while another
      // process retrains the space.
      const stored = this.snapshot(() => {
        if (options.memoryIds === undefined)
          return this.ivf.search(contextId, space, version, query, options);
        // A trained space's memoryIds search: the exact scan of those memories' rows, no index to build.
        if (this.ivf.current(contextId, space) === undefined) return undefined;
        const rows = this.vectorsOf.all(contextId, space, JSON.stringify([...new Set(options.memoryIds)]));
        return new VectorIndex((rows as VectorDbRow[]).map(toVectorRow), {
          approximateAbove: Number.POSITIVE_INFINITY,
        }).search(query, options);
      });
      if (stored) return stored;
      const entry = this.currentIndex(contextId, space, version);
      for (;;) {
        const hits = entry.index.search(query, options);
        // Rows removed since the index was built (a deleted or changed memory) leave no row to catch up
        // from: the hits' memories are checked against the table, and a search that met one runs again.
        if (
          !entry.caughtUp ||
          hits.length === 0 ||
          this.dropRemoved(contextId, space, entry.index, hits) === 0
        )
          return hits;
      }
    });
  }

  /**
   * The cached index of (context, space) at `version`: built from every row when there is none (or the cached
   * one is from a rolled-back or another file's history), else brought up to date with the rows written since
   * its version (`vectors.changed`, an index range): a write costs the next search what it wrote, not the space.
   */
  private currentIndex(contextId: string, space: string, version: number): CachedIndex {
    const key = pairKey(contextId, space);
    const hit = this.vectorCache.get(key);
    this.vectorCache.delete(key);
    let entry: CachedIndex;
    if (hit && hit.version === version) entry = hit;
    else if (hit && hit.version < version && this.catchUp(contextId, space, hit)) entry = { ...hit, version };
    else {
      const rows = (this.statements.listVectors.all(contextId, space) as VectorDbRow[]).map(toVectorRow);
      entry = { version, index: new VectorIndex(rows), caughtUp: false };
    }
    this.vectorCache.set(key, entry);
    if (this.vectorCache.size > CACHED_CONTEXTS)
      this.vectorCache.delete(this.vectorCache.keys().next().value!);
    return entry;
  }

  /** Applies the rows written after `entry.version`; false when rebuilding is cheaper (or impossible). */
  private catchUp(contextId: string, space: string, entry: CachedIndex): boolean {
    let rows: VectorDbRow[];
    try {
      rows = this.vectorsSince.all(contextId, space, entry.version, entry.index.size + 1) as VectorDbRow[];
    } catch {
      return false; // a read-only file from before the `changed` column (migration 10)
    }
    if (rows.length > entry.index.size) return false;
    entry.index.upsert(rows.map(toVectorRow));
    entry.caughtUp = true;
    return true;
  }

  /** Drops from `index` the rows of the hits' memories that the table no longer holds; returns how many. */
  private dropRemoved(
    contextId: string,
    space: string,
    index: VectorIndex,
    hits: readonly ViewHit[],
  ): number {
    const stored = this.ivf.storedKeys(contextId, space, hits);
    const gone = hits.filter((hit) => !stored.has(vectorRowKey(hit)));
    return gone.length === 0 ? 0 : index.remove(gone);
  }

  async listVectorSpaces(contextId: string): Promise<string[]> {
    const rows = this.run(() => this.statements.listVectorSpaces.all(contextId)) as { space: string }[];
    return rows.map((row) => row.space);
  }

  /** A deleted context's cached indexes. */
  forgetContext(contextId: string): void {
    for (const key of [...this.vectorCache.keys()]) {
      if (key.startsWith(pairKey(contextId, ''))) this.vectorCache.delete(key);
    }
    this.ivf.clear();
  }

  clear(): void {
    this.vectorCache.clear();
    this.ivf.clear();
  }

  private vectorVersion(contextId: string): number | undefined {
    const row = this.statements.vectorVersion.get(contextId) as { vector_version: number } | undefined;
    return row?.vector_version;
  }
}

interface VectorDbRow {
  memory_id: string;
  kind: ViewKind;
  key: string;
  vector: Buffer;
}

function toVectorRow(row: VectorDbRow): VectorRow {
  // Copy: the blob's buffer may not be 4-byte aligned, and callers must not share memory with the driver.
  const bytes = new Uint8Array(row.vector.byteLength);
  bytes.set(row.vector);
  return { memoryId: row.memory_id, kind: row.kind, key: row.key, vector: new Float32Array(bytes.buffer) };
}
