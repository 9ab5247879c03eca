import type { Command } from 'commander';

interface ImportFlags {
  bundle: string;
  db: string;
  context?: string;
  json?: boolean;
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      'Restore a bundle made by `graphmemix export` into an archive (created when absent); idempotent. ' +
        'Other data formats go through `graphmemix ingest`.',
    )
    .requiredOption('--bundle <dir>', 'bundle folder written by graphmemix export')
    .requiredOption('--db <file|url>', 'target archive: a SQLite file or a postgres:// URL')
    .option('--context <id>', 'restore only this context of the bundle')
    .option('--json', 'print one JSON object')
    .action(async (flags: ImportFlags) => {
      const { importBundle } = await import('../archive-bundle.ts');
      const result = await importBundle(flags);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      const contexts = result.contexts.map((c) => `${c.id} (${c.memories}, ${c.written} written)`).join(', ');
      process.stdout.write(
        `restored ${contexts}; ${result.media_files} media files\n` +
          result.warnings.map((w) => `  warning: ${w}\n`).join(''),
      );
    });
}
