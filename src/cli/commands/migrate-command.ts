import type { Command } from 'commander';
import { SCHEMA_VERSION } from '../../store/migrations.ts';
import { openStore } from '../../store/open-store.ts';
import { isPostgresUrl } from '../../store/postgres/postgres-url.ts';

interface MigrateFlags {
  db: string;
  json?: boolean;
}

interface MigrateResult {
  backend: 'sqlite' | 'postgres';
  schemaVersion: number;
  from?: number;
  vectorSupport?: 'pgvector' | 'exact';
}

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description(
      'Bring an archive to the current schema: a SQLite file, or a PostgreSQL database (versioned migrations, row-level security, pgvector when available). Idempotent.',
    )
    .requiredOption('--db <file|url>', 'archive database file or postgres:// URL')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix migrate --db archive.db
  $ graphmemix migrate --db postgres://graphmemix@127.0.0.1:5432/graphmemix`,
    )
    .action(async (flags: MigrateFlags) => {
      const result = await runMigrate(flags.db);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      const vectors = result.vectorSupport ? `, vectors: ${result.vectorSupport}` : '';
      const from = result.from === undefined ? '' : ` (was ${result.from})`;
      process.stdout.write(`${result.backend} schema ${result.schemaVersion}${from}${vectors}\n`);
    });
}

async function runMigrate(db: string): Promise<MigrateResult> {
  if (isPostgresUrl(db)) {
    // Loaded only here: SQLite users never import pg.
    const { migratePostgres } = await import('../../store/postgres/postgres-migrate.ts');
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
