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
      const { finishRelationUpgrades, migrateArchive, openStore } = await import('../../index.ts');
      const result = await migrateArchive(flags.db);
      // A migration that changed stored terms (a tokenizer change) marks contexts for a relation upgrade:
      // rebuild them now, while maintenance is expected, rather than at each context's next write.
      const store = await openStore(flags.db);
      const relations = await finishRelationUpgrades(store).finally(() => store.close());
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ ...result, relations })}\n`);
        return;
      }
      const vectors = result.vectorSupport ? `, vectors: ${result.vectorSupport}` : '';
      const from = result.from === undefined ? '' : ` (was ${result.from})`;
      process.stdout.write(`${result.backend} schema ${result.schemaVersion}${from}${vectors}\n`);
      if (result.ivfTrained) {
        process.stdout.write(`stored IVF trained for ${result.ivfTrained} vector space(s)\n`);
      }
      if (relations.rebuilt.length > 0) {
        process.stdout.write(`relations rebuilt for ${relations.rebuilt.length} context(s)\n`);
      }
      if (relations.deferred.length > 0) {
        process.stdout.write(
          `relations of ${relations.deferred.length} context(s) with embedding kNN are rebuilt at their next write through an archive configured with the embedding model: ${relations.deferred.join(', ')}\n`,
        );
      }
    });
}
