import type { ArchiveStore } from './archive-store-spec.ts';

/** What `/v1/health` and `graphmemix --version` report about an open store. */
export interface StoreDescription {
  /** 'sqlite' | 'memory' | 'postgres'. */
  backend: string;
  /**
   * 'in-process' (SQLite, memory: exact scan, IVF above 20k vectors per context), 'pgvector' (Postgres with
   * the extension: HNSW, cosine) or 'exact' (Postgres without it: exact scoring of the context's vectors).
   */
  vectorSupport: string;
}

export function describeStore(store: Pick<ArchiveStore, 'backend' | 'vectorSupport'>): StoreDescription {
  return { backend: store.backend, vectorSupport: store.vectorSupport ?? 'in-process' };
}
