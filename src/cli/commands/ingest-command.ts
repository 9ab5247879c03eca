import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { IngestReport } from '../../digest/ingest-report.ts';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import {
  createModels,
  DIALOGUE_SHAPES,
  type DialogueShape,
  IMPORT_FORMATS,
  isImportFormat,
  loadModelConfig,
  openGraphmemix,
} from '../../index.ts';
import { RELATION_TYPES } from '../../types/relation.ts';
import { announceNewArchive } from '../archive-checks.ts';
import { createProgress } from '../progress.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface IngestFlags {
  format: string;
  db: string;
  context?: string;
  shape?: string;
  json?: boolean;
  config?: string;
}

export function registerIngestCommand(program: Command): void {
  program
    .command('ingest')
    .description('Import a file or directory into an archive through the one ingest path (views, relations).')
    .argument('<path>', 'file or directory to import (directories are searched for the format)')
    .requiredOption('--format <format>', `source format: ${IMPORT_FORMATS.join('|')}`)
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--context <id>', 'put everything into this archive context')
    .option('--shape <shape>', 'dialogue datasets with rounds: rounds (default) or turns (no round links)')
    .option('--json', 'print the summary as one JSON object')
    .option(
      '--config <file>',
      'model config (vision captions for photos, embeddings); default: env / ./graphmemix.config.json',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix ingest my-archive.jsonl --format unified --db archive.db --context alice
  $ graphmemix ingest ../shared/data/mem-gallery --format mem-gallery --db mg.db --json`,
    )
    .action(async (path: string, flags: IngestFlags) => {
      const report = await runIngest(path, flags);
      process.stdout.write(flags.json ? `${JSON.stringify(ingestSummary(report))}\n` : formatReport(report));
      // Everything rejected and nothing stored: the wrong --format or a broken file, not a success.
      const stored = report.imported + report.updated + report.unchanged + report.skipped;
      if (stored === 0 && report.rejected.length > 0) {
        const first = report.rejected[0]!;
        throw new GraphmemixError(
          'INVALID_INPUT',
          `no record imported: ${report.rejected.length} rejected as ${flags.format} (first: ${first.message}); check --format`,
          { location: { field: 'format' } },
        );
      }
    });
}

/** Validates flags, runs the importer through ingestItems and closes the store also on failure. */
export async function runIngest(path: string, flags: IngestFlags): Promise<IngestReport> {
  if (!isImportFormat(flags.format)) {
    throw new GraphmemixError(
      'UNSUPPORTED',
      `unknown format "${flags.format}" (use ${IMPORT_FORMATS.join(', ')})`,
      {
        location: { field: 'format' },
      },
    );
  }
  if (flags.shape !== undefined && !(DIALOGUE_SHAPES as readonly string[]).includes(flags.shape)) {
    throw new GraphmemixError(
      'INVALID_INPUT',
      `unknown shape "${flags.shape}" (use ${DIALOGUE_SHAPES.join(', ')})`,
      {
        location: { field: 'shape' },
      },
    );
  }
  if (!existsSync(path)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no such file or directory: ${path}`, {
      location: { file: path },
    });
  }
  // Configured models join the digest (vision captions for photos, embeddings); nothing configured: offline.
  const models = createModels(loadModelConfig(flags.config === undefined ? {} : { path: flags.config }));
  announceNewArchive(flags.db);
  const gm = await openGraphmemix({ db: flags.db, models });
  const progress = createProgress({ label: `ingest ${flags.format}` });
  try {
    return await gm.ingest(path, {
      format: flags.format,
      ...(flags.context === undefined ? {} : { contextId: flags.context }),
      ...(flags.shape === undefined ? {} : { shape: flags.shape as DialogueShape }),
      onProgress: (n) => progress.update(n, 'items'),
    });
  } finally {
    progress.done();
    await gm.close();
  }
}

/**
 * The `--json` shape of the issue: {contexts, memories, assets, questions, edges{...}, rejected, seconds}
 * first (counts), then detail fields. `memories` counts the records this import accepted (new + updated +
 * unchanged), so re-running an import prints the same numbers.
 */
export function ingestSummary(report: IngestReport): Record<string, unknown> {
  return {
    contexts: report.contexts.length,
    memories: report.imported + report.updated + report.unchanged,
    assets: report.assets,
    questions: report.questions,
    edges: Object.fromEntries(RELATION_TYPES.map((type) => [type, report.edges[type]])),
    rejected: report.rejected.length,
    seconds: Math.round(report.seconds * 1000) / 1000,
    imported: report.imported,
    updated: report.updated,
    unchanged: report.unchanged,
    skipped: report.skipped,
    rejections: report.rejected,
    warnings: report.warnings,
    step_seconds: Object.fromEntries(
      Object.entries(report.stepSeconds).map(([step, seconds]) => [step, Math.round(seconds * 1000) / 1000]),
    ),
  };
}

function formatReport(report: IngestReport): string {
  const lines = [
    `contexts ${report.contexts.length}, memories: ${report.imported} imported, ${report.updated} updated, ` +
      `${report.unchanged} unchanged, ${report.skipped} skipped, ${report.rejected.length} rejected`,
    `assets ${report.assets}, questions ${report.questions}`,
    `edges ${RELATION_TYPES.map((type) => `${type} ${report.edges[type]}`).join(', ')}`,
    `${report.seconds.toFixed(2)} s (${Object.entries(report.stepSeconds)
      .filter(([step]) => !step.includes('.'))
      .map(([step, seconds]) => `${step} ${seconds.toFixed(2)}`)
      .join(', ')})`,
  ];
  const shown = report.rejected.slice(0, 20);
  for (const rejection of shown) {
    const where = [rejection.line === undefined ? rejection.file : `${rejection.file}:${rejection.line}`];
    if (rejection.recordId !== undefined) where.push(`record ${rejection.recordId}`);
    if (rejection.field !== undefined) where.push(`field ${rejection.field}`);
    lines.push(`  rejected [${rejection.code}] ${where.filter(Boolean).join(', ')}: ${rejection.message}`);
  }
  if (report.rejected.length > shown.length)
    lines.push(`  ... ${report.rejected.length - shown.length} more rejected`);
  for (const warning of report.warnings.slice(0, 20)) lines.push(`  warning: ${warning}`);
  if (report.warnings.length > 20) lines.push(`  ... ${report.warnings.length - 20} more warnings`);
  return `${lines.join('\n')}\n`;
}
