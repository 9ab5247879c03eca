import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ViewHit } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';
import type { ContextData } from './memory-store-context-data.ts';
import { compareVectorRows, vectorDimensionError, vectorRowKey } from './store-rules.ts';
import { VectorIndex } from './vector-index.ts';

/** The in-memory store's vectors: rows per (context, space), searched through an index built lazily per space. */
export class MemoryStoreVectors {
  constructor(
    private readonly contexts: ReadonlyMap<string, ContextData>,
    private readonly assertOpen: () => void,
    private readonly context: (contextId: string, create: boolean) => ContextData,
  ) {}

  async putVectors(contextId: string, space: string, rows: readonly VectorRow[]): Promise<void> {
    this.assertOpen();
    const data = this.context(contextId, false);
    for (const row of rows) {
      if (!data.memories.has(row.memoryId)) {
        throw new GraphmemixError(
          'INVALID_INPUT',
          `vector of unknown memory "${row.memoryId}" in "${contextId}"`,
        );
      }
    }
    let space_ = data.vectors.get(space);
    if (!space_) {
      space_ = new Map();
      data.vectors.set(space, space_);
    }
    const dims = space_.values().next().value?.vector.length ?? rows[0]?.vector.length;
    for (const row of rows) {
      if (row.vector.length !== dims) {
        throw vectorDimensionError(space, dims ?? 0, row.vector.length);
      }
    }
    for (const row of rows) {
      space_.set(vectorRowKey(row), { ...row, vector: Float32Array.from(row.vector) });
    }
    data.vectorIndexes.delete(space);
  }

  async getVectors(contextId: string, space: string, memoryIds?: readonly string[]): Promise<VectorRow[]> {
    this.assertOpen();
    const rows = [...(this.contexts.get(contextId)?.vectors.get(space)?.values() ?? [])];
    const wanted = memoryIds ? new Set(memoryIds) : undefined;
    return rows
      .filter((row) => !wanted || wanted.has(row.memoryId))
      .sort(compareVectorRows)
      .map((row) => ({ ...row, vector: Float32Array.from(row.vector) }));
  }

  async searchVectors(
    contextId: string,
    space: string,
    query: Float32Array,
    options: VectorSearchOptions,
  ): Promise<ViewHit[]> {
    this.assertOpen();
    const data = this.contexts.get(contextId);
    const rows = data?.vectors.get(space);
    if (!data || !rows || rows.size === 0) return [];
    let index = data.vectorIndexes.get(space);
    if (!index) {
      index = new VectorIndex([...rows.values()].sort(compareVectorRows));
      data.vectorIndexes.set(space, index);
    }
    return index.search(query, options);
  }

  async listVectorSpaces(contextId: string): Promise<string[]> {
    this.assertOpen();
    const spaces = this.contexts.get(contextId)?.vectors ?? new Map<string, Map<string, VectorRow>>();
    return [...spaces].flatMap(([space, rows]) => (rows.size > 0 ? [space] : [])).sort();
  }
}
