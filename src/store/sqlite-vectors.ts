import type Database from 'better-sqlite3';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';
import { pairKey } from './edge-merge.ts';
import type { SqliteStoreStatements } from './sqlite-store-statements.ts';
import { vectorDimensionError } from './store-rules.ts';
import type { UsearchVectorIndexes } from './usearch-vector-index.ts';
import { VectorIndex } from './vector-index.ts';

/** How many contexts keep a cached vector index per open store (least recently used is dropped). */
const CACHED_CONTEXTS = 32;

interface Cached<T> {
  version: number;
  value: T;
}

/**
 * The SQLite store's vectors: rows per (context, space), searched through the approximate index files when
 * they answer (usearch-vector-index.ts), otherwise through an index per context built lazily and cached while
 * `contexts.vector_version` stays (vector-index.ts).
 */
export class SqliteVectors {
  private readonly vectorCache = new Map<string, Cached<VectorIndex>>();

  constructor(
    private readonly db: Database.Database,
    private readonly statements: SqliteStoreStatements,
    private readonly run: <T>(work: () => T) => T,
    private readonly ann: UsearchVectorIndexes,
  ) {}

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    if (rows.length === 0) return;
    const s = this.statements;
    this.run(() =>
      this.db
        .transaction(() => {
          const existing = s.spaceDims.get(contextId, space) as { dims: number } | undefined;
          const dims = existing?.dims ?? rows[0]!.vector.length;
          // Rows carry the version that wrote them (the approximate index reads what is newer than its file).
          s.bumpVectorVersion.run(contextId);
          const version = (s.vectorVersion.get(contextId) as { vector_version: number } | undefined)
            ?.vector_version;
          for (const row of rows) {
            if (row.vector.length !== dims) throw vectorDimensionError(space, dims, row.vector.length);
            if (!s.getHash.get(contextId, row.memoryId)) {
              throw new GraphmemixError(
                'INVALID_INPUT',
                `vector of unknown memory "${row.memoryId}" in "${contextId}"`,
              );
            }
            const blob = Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength);
            s.upsertVector.run(contextId, space, row.memoryId, row.kind, row.key, dims, blob, version ?? 0);
          }
        })
        .immediate(),
    );
    await this.ann.afterWrite(contextId, space);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    const wanted = memoryIds ? new Set(memoryIds) : undefined;
    const rows = this.run(() => this.statements.listVectors.all(contextId, space)) as VectorDbRow[];
    return rows.filter((row) => !wanted || wanted.has(row.memory_id)).map(toVectorRow);
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
    const index = this.run(() => {
      return cached(this.vectorCache, pairKey(contextId, space), version, () => {
        const rows = (this.statements.listVectors.all(contextId, space) as VectorDbRow[]).map(toVectorRow);
        return new VectorIndex(rows);
      });
    });
    return index ? index.search(query, options) : [];
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
  }

  clear(): void {
    this.vectorCache.clear();
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

function cached<T>(cache: Map<string, Cached<T>>, key: string, version: number, build: () => T): T {
  const hit = cache.get(key);
  cache.delete(key);
  const entry = hit && hit.version === version ? hit : { version, value: build() };
  cache.set(key, entry);
  if (cache.size > CACHED_CONTEXTS) cache.delete(cache.keys().next().value!);
  return entry.value;
}

function toVectorRow(row: VectorDbRow): VectorRow {
  // Copy: the blob's buffer may not be 4-byte aligned, and callers must not share memory with the driver.
  const bytes = new Uint8Array(row.vector.byteLength);
  bytes.set(row.vector);
  return { memoryId: row.memory_id, kind: row.kind, key: row.key, vector: new Float32Array(bytes.buffer) };
}
