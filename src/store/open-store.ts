import type { ArchiveStore } from './archive-store-spec.ts';
import { createMemoryStore } from './memory-store.ts';
import { createSqliteStore } from './sqlite-store.ts';

export interface OpenStoreOptions {
  /** Open an existing SQLite file read-only (no migrations; writes fail with STORE). */
  readonly?: boolean;
}

/**
 * Opens an archive store:
 * - 'memory:' -> the in-memory backend (plain maps, src/store/memory-store.ts);
 * - ':memory:' -> the SQLite backend on a private in-memory database (same code path as a file);
 * - anything else -> the SQLite file at that path (created and migrated when absent).
 * Throws GraphmemixError STORE for a file that is not a graphmemix store or is newer than this code.
 */
export async function openStore(path: string, options: OpenStoreOptions = {}): Promise<ArchiveStore> {
  if (path === 'memory:') return createMemoryStore();
  return createSqliteStore(path, options);
}
