import type pg from 'pg';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, RLS_ROLE, rlsSql } from './postgres-schema.ts';
import { asStoreError, createPool, redactUrl } from './postgres-session.ts';

/** Session-level advisory lock held while migrating: two processes opening one database at once take turns. */
const MIGRATE_LOCK = 0x67726d78; // 'grmx'

export interface MigrationReport {
  /** Schema version before and after. */
  from: number;
  to: number;
  /** Whether the pgvector extension is usable (the `vectors.embedding` column exists). */
  pgvector: boolean;
}

/**
 * Brings the database behind `url` to the current schema (the CLI's `graphmemix migrate --db postgres://...`).
 * Idempotent; safe when several processes run it at once.
 */
export async function migratePostgres(url: string): Promise<MigrationReport> {
  const pool = createPool(url, 1);
  try {
    const client = await pool.connect();
    try {
      return await migrateClient(client, redactUrl(url));
    } finally {
      client.release();
    }
  } catch (error) {
    throw asStoreError(error, redactUrl(url));
  } finally {
    await pool.end();
  }
}

/**
 * On one connection: versioned migrations from `schema_migrations`, each in its own transaction, under a
 * session advisory lock (re-reading the version inside it), then the idempotent parts re-applied every time:
 * the RLS role, grants and policies, and the optional pgvector column.
 */
export async function migrateClient(client: pg.PoolClient, where: string): Promise<MigrationReport> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK]);
  try {
    const tables = await client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
       WHERE table_schema = current_schema() AND table_name IN ('schema_migrations', 'memories')`,
    );
    const names = new Set(tables.rows.map((row) => row.name));
    if (names.has('memories') && !names.has('schema_migrations')) {
      throw new GraphmemixError(
        'STORE',
        'not a graphmemix database (a memories table without schema_migrations)',
        {
          location: { file: where },
        },
      );
    }
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const from = await currentVersion(client);
    if (from > POSTGRES_SCHEMA_VERSION) {
      throw new GraphmemixError(
        'STORE',
        `database schema version ${from} is newer than this graphmemix (${POSTGRES_SCHEMA_VERSION}); upgrade graphmemix`,
        { location: { file: where }, details: { storeVersion: from, supported: POSTGRES_SCHEMA_VERSION } },
      );
    }
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= from) continue;
      await inTransaction(client, async () => {
        await client.query(migration.sql);
        await migration.backfill?.(client);
        await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      });
    }
    await inTransaction(client, async () => {
      await client.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${RLS_ROLE}') THEN
          CREATE ROLE ${RLS_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS;
        END IF;
      EXCEPTION WHEN insufficient_privilege OR duplicate_object OR unique_violation THEN NULL;
      END $$`);
      const role = await client.query(`SELECT 1 FROM pg_roles WHERE rolname = '${RLS_ROLE}'`);
      if (role.rowCount) {
        await client.query(`DO $$ BEGIN
          EXECUTE format('GRANT USAGE ON SCHEMA %I TO ${RLS_ROLE}', current_schema());
          EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO ${RLS_ROLE}', current_schema());
          EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO ${RLS_ROLE}', current_schema());
          EXECUTE format('REVOKE ALL ON schema_migrations FROM ${RLS_ROLE}');
        END $$`);
      }
      await client.query(rlsSql());
    });
    const pgvector = await ensurePgvector(client);
    return { from, to: POSTGRES_SCHEMA_VERSION, pgvector };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK]).catch(() => {});
  }
}

async function currentVersion(client: pg.PoolClient): Promise<number> {
  const row = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  return row.rows[0]?.v ?? 0;
}

/**
 * pgvector when the extension can be created (installed on the server and we may create it): adds the
 * `embedding vector` column that mirrors `vectors.vector` for the HNSW path. Otherwise vectors are scored
 * exactly from the bytea column. Re-checked on every open, so installing pgvector later upgrades in place.
 */
async function ensurePgvector(client: pg.PoolClient): Promise<boolean> {
  const available = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (!available.rowCount) return false;
  try {
    await inTransaction(client, async () => {
      await client.query('CREATE EXTENSION IF NOT EXISTS vector');
      await client.query('ALTER TABLE vectors ADD COLUMN IF NOT EXISTS embedding vector');
    });
  } catch {
    // No privilege to create the extension: the exact path serves every search.
  }
  return hasEmbeddingColumn(client);
}

export async function hasEmbeddingColumn(client: pg.ClientBase): Promise<boolean> {
  const column = await client.query(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = 'vectors' AND column_name = 'embedding'`,
  );
  return (column.rowCount ?? 0) > 0;
}

async function inTransaction(client: pg.PoolClient, work: () => Promise<void>): Promise<void> {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
