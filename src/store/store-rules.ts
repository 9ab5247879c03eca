import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { MemoryWrite, VectorRow } from './archive-store-spec.ts';

/**
 * Meta key holding the TOKENIZER_VERSION the archive's stored terms were made with (lexical postings, the
 * semantic IDF snapshot, relation keys); written by the store migrations that reindex (SQLite 7, Postgres 4).
 */
export const TOKENIZER_VERSION_META = 'tokenizer_version';

/** Rejects writes that would break isolation or view ownership (every backend calls it first). */
export function assertWrite(contextId: string, write: MemoryWrite): void {
  if (write.record.contextId !== contextId) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `record "${write.record.id}" belongs to "${write.record.contextId}", not "${contextId}"`,
      { location: { recordId: write.record.id, field: 'contextId' } },
    );
  }
  for (const view of write.views) {
    if (view.memoryId !== write.record.id) {
      throw new GraphmemixError(
        'INVALID_INPUT',
        `view of "${view.memoryId}" written with record "${write.record.id}"`,
        { location: { recordId: write.record.id } },
      );
    }
  }
}

/** The order getVectors returns and vector indexes are built in: memory id, view kind, view key. */
/** The identity of a vector row: one row per (memory, kind, key) in a space. */
export type VectorRowKey = Pick<VectorRow, 'memoryId' | 'kind' | 'key'>;

/** A map key for a row's identity (NUL cannot occur in ids, kinds or keys the stores accept). */
export function vectorRowKey(row: VectorRowKey): string {
  return `${row.memoryId}\u0000${row.kind}\u0000${row.key}`;
}

export function compareVectorRows(x: VectorRowKey, y: VectorRowKey): number {
  return (
    compareStrings(x.memoryId, y.memoryId) || compareStrings(x.kind, y.kind) || compareStrings(x.key, y.key)
  );
}

/** The best `limit` hits by score, ties by (memory, kind, key): one order for every vector search. Sorts `hits`. */
export function rankVectorHits<T extends VectorRowKey & { rawScore: number }>(hits: T[], limit: number): T[] {
  hits.sort((x, y) => y.rawScore - x.rawScore || compareVectorRows(x, y));
  return hits.slice(0, limit);
}

export function compareStrings(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

export function vectorDimensionError(space: string, expected: number, actual: number): GraphmemixError {
  return new GraphmemixError(
    'INVALID_INPUT',
    `vector has ${actual} dimensions, space "${space}" has ${expected}`,
    { details: { space, expected, actual } },
  );
}
