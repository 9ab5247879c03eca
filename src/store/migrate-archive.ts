import { SCHEMA_VERSION } from './migrations.ts';
import { openStore } from './open-store.ts';
import { isPostgresUrl } from './postgres/postgres-url.ts';

export interface MigrateArchiveResult {
  backend: 'sqlite' | 'postgres';
  schemaVersion: number;
  from?: number;
  vectorSupport?: 'pgvector' | 'exact';
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
  return { backend: 'sqlite', schemaVersion: SCHEMA_VERSION };
}
