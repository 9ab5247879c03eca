import type { ArchiveStore } from './archive-store-spec.ts';
import { usearchInstalled } from './usearch-vector-index.ts';

/** What `/v1/health` and `graphmemix --version` report about an open store. */
export interface StoreDescription {
  /** 'sqlite' | 'memory' | 'postgres'. */
  backend: string;
  /**
   * 'usearch' (SQLite with the optional package: persistent HNSW files above 20k vectors per context and
   * space, exact below), 'stored-ivf' (SQLite without it: exact below 20k, above it an IVF kept in the archive),
   * 'in-process' (memory: exact, an IVF built in the process above 20k),
   * 'pgvector' (Postgres with the extension: HNSW, cosine) or 'exact' (Postgres without it).
   */
  vectorSupport: string;
}

export function describeStore(store: Pick<ArchiveStore, 'backend' | 'vectorSupport'>): StoreDescription {
  return { backend: store.backend, vectorSupport: store.vectorSupport ?? 'in-process' };
}

/** What a SQLite archive would report without opening one (`--version` with no existing file). */
export function sqliteVectorSupport(): 'usearch' | 'stored-ivf' {
  return usearchInstalled() ? 'usearch' : 'stored-ivf';
}
