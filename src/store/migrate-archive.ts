import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from './migrations.ts';
import { openStore } from './open-store.ts';
import { isPostgresUrl } from './postgres/postgres-url.ts';
import { fillSemanticTopLists } from './sqlite-semantic-top.ts';
import { trainUntrainedSpaces } from './sqlite-stored-ivf.ts';
import { parseStoreLocation } from './store-location.ts';
import { usearchInstalled } from './usearch-vector-index.ts';

export interface MigrateArchiveResult {
  backend: 'sqlite' | 'postgres';
  schemaVersion: number;
  from?: number;
  vectorSupport?: 'pgvector' | 'exact';
  /** SQLite without usearch: vector spaces given their stored IVF by this run (sqlite-stored-ivf.ts). */
  ivfTrained?: number;
}

/** Brings an archive (a SQLite file or a postgres:// URL) to the current schema; idempotent. */
export async function migrateArchive(db: string): Promise<MigrateArchiveResult> {
  if (isPostgresUrl(db)) {
    // Loaded only here: SQLite users never import pg.
    const { migratePostgres } = await import('./postgres/postgres-migrate.ts');
    const report = await migratePostgres(db);
    return {
      backend: 'postgres',
      schemaVersion: report.to,
      from: report.from,
      vectorSupport: report.pgvector ? 'pgvector' : 'exact',
    };
  }
  // Opening a SQLite file applies its migrations (src/store/migrations.ts).
  const store = await openStore(db);
  await store.close();
  // What a file from before migration 12 lacks and no open builds: the kept top lists of common terms.
  const location = parseStoreLocation(db);
  let ivfTrained = 0;
  if (location.kind === 'sqlite' && location.path !== ':memory:') {
    const raw = new Database(location.path, { timeout: 5000 });
    try {
      fillSemanticTopLists(raw);
      // And the stored IVF of large vector spaces (from before migration 14), unless usearch serves them.
      if (!usearchInstalled()) ivfTrained = trainUntrainedSpaces(raw).length;
    } finally {
      raw.close();
    }
  }
  return { backend: 'sqlite', schemaVersion: SCHEMA_VERSION, ...(ivfTrained > 0 ? { ivfTrained } : {}) };
}
