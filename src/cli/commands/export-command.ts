import type { Command } from 'commander';

interface ExportFlags {
  db: string;
  out: string;
  context?: string;
  json?: boolean;
}

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description(
      'Back up an archive or one context as a bundle folder (archive.db, media/, manifest.json): records, ' +
        'views, relations, vectors, semantic index, calibrations, questions and every local medium.',
    )
    .requiredOption('--db <file|url>', 'archive to back up: a SQLite file or a postgres:// URL (read only)')
    .requiredOption('--out <dir>', 'bundle folder to create (must be new or empty)')
    .option('--context <id>', 'export only this context (user)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix export --db archive.db --context alice --out backups/alice-2026-11-30
  $ graphmemix import --bundle backups/alice-2026-11-30 --db restored.db`,
    )
    .action(async (flags: ExportFlags) => {
      const { exportBundle } = await import('../archive-bundle.ts');
      const result = await exportBundle(flags);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        return;
      }
      const contexts = result.manifest.contexts.map((c) => `${c.id} (${c.memories})`).join(', ');
      process.stdout.write(
        `bundle ${result.bundle}: ${contexts}; ${result.media_files} media files\n` +
          result.warnings.map((w) => `  warning: ${w}\n`).join(''),
      );
    });
}
