import type { Command } from 'commander';

interface MigrateFlags {
  db: string;
  json?: boolean;
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
      const { migrateArchive } = await import('../../index.ts');
      const result = await migrateArchive(flags.db);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      const vectors = result.vectorSupport ? `, vectors: ${result.vectorSupport}` : '';
      const from = result.from === undefined ? '' : ` (was ${result.from})`;
      process.stdout.write(`${result.backend} schema ${result.schemaVersion}${from}${vectors}\n`);
    });
}
