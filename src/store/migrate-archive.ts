import { SCHEMA_VERSION } from './migrations.ts';
import { openStore } from './open-store.ts';
import { isPostgresUrl } from './postgres/postgres-url.ts';

export interface MigrateArchiveResult {
  backend: 'sqlite' | 'postgres';
  schemaVersion: number;
  /** Postgres: the schema version before this run. */
  from?: number;
  /** Postgres: whether pgvector serves large vector spaces. */
  vectorSupport?: 'pgvector' | 'exact';
}

/**
 * Brings an archive to the current schema (`graphmemix migrate --db`): a SQLite file (created when absent;
 * opening applies src/store/migrations.ts) or a postgres:// URL (versioned migrations under an advisory lock,
 * row-level security, pgvector when available). Idempotent. `pg` is loaded only for a URL.
 */
export async function migrateArchive(db: string): Promise<MigrateArchiveResult> {
  if (isPostgresUrl(db)) {
    const { migratePostgres } = await import('./postgres/postgres-migrate.ts');
    const report = await migratePostgres(db);
    return {
      backend: 'postgres',
      schemaVersion: report.to,
      from: report.from,
      vectorSupport: report.pgvector ? 'pgvector' : 'exact',
    };
  }
  const store = await openStore(db);
  await store.close();
  return { backend: 'sqlite', schemaVersion: SCHEMA_VERSION };
}
