import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { type CopyArchiveReport, isInMemoryDb, isPostgresUrl, redactDbUrl } from '../../index.ts';
import { createProgress, type Progress } from '../progress.ts';

export interface CopyFlags {
  from: string;
  to: string;
  context?: string;
  fromMedia?: string;
  toMedia?: string;
  json?: boolean;
  /** Backups: also copy local media outside the source's media folder (see mediaRewrite). */
  externalMedia?: 'copy';
}

export function registerCopyCommand(program: Command): void {
  program
    .command('copy')
    .description(
      'Copy a whole archive or one context between archives (SQLite file <-> postgres:// URL, either way): ' +
        'records, views, keys, vectors, edges, semantic index, questions, calibrations, media. Idempotent.',
    )
    .requiredOption('--from <db|url>', 'source archive (read only): a SQLite file or a postgres:// URL')
    .requiredOption('--to <db|url>', 'target archive (created and migrated when absent)')
    .option('--context <id>', 'copy only this context (user)')
    .option('--from-media <dir>', "source media folder (default: beside a SQLite file; see 'serve')")
    .option(
      '--to-media <dir>',
      'target media folder (default: beside a SQLite file; for a URL $GRAPHMEMIX_MEDIA_DIR)',
    )
    .option('--json', 'print the report as one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix copy --from archive.db --to postgres://graphmemix@db.internal/graphmemix
  $ graphmemix copy --from postgres://graphmemix@db.internal/graphmemix --to alice.db --context alice`,
    )
    .action(async (flags: CopyFlags) => {
      const report = await runCopy(flags);
      process.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : formatReport(report));
    });
}

/** Opens both archives (the source read-only for a file), copies through the library and closes both. */
export async function runCopy(
  flags: CopyFlags,
): Promise<CopyArchiveReport & { from: string; to: string; mediaFiles: number }> {
  const same = (db: string) => (isPostgresUrl(db) ? db : resolve(db));
  if (same(flags.from) === same(flags.to)) {
    throw new GraphmemixError('INVALID_INPUT', '--from and --to name the same archive', {
      location: { field: 'to' },
    });
  }
  for (const [field, db] of [
    ['from', flags.from],
    ['to', flags.to],
  ] as const) {
    if (isInMemoryDb(db)) {
      throw new GraphmemixError('INVALID_INPUT', `--${field} must be a SQLite file or a postgres:// URL`, {
        location: { field },
      });
    }
  }
  if (!isPostgresUrl(flags.from) && !existsSync(flags.from)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no such archive: ${flags.from}`, {
      location: { file: flags.from, field: 'from' },
    });
  }
  const { copyArchive, mediaRewrite, openStore } = await import('../../index.ts');
  const { mediaDirPath } = await import('../../shell-kit/open-shell-graphmemix.ts');
  const rewrite = mediaRewrite(
    flags.fromMedia ?? mediaDirPath(flags.from),
    flags.toMedia ?? mediaDirPath(flags.to),
    flags.externalMedia === undefined ? {} : { external: flags.externalMedia },
  );
  const source = await openStore(flags.from, isPostgresUrl(flags.from) ? {} : { readonly: true });
  let target: Awaited<ReturnType<typeof openStore>>;
  try {
    target = await openStore(flags.to);
  } catch (error) {
    await source.close();
    throw error;
  }
  // The bar is made on the first report, which knows the total (the source's memory count).
  let progress: Progress | undefined;
  try {
    const report = await copyArchive(source, target, {
      ...(flags.context === undefined ? {} : { contextId: flags.context }),
      ...(rewrite === undefined ? {} : { rewrite }),
      onProgress: ({ done, total, contextId }) => {
        progress ??= createProgress({ label: 'copy', total });
        progress.update(done, `memories (${contextId})`);
      },
    });
    if (rewrite && rewrite.stats.missing > 0) {
      report.warnings.push(
        `${rewrite.stats.missing} media files of the source folder were missing (not copied)`,
      );
    }
    return {
      from: redactDbUrl(flags.from),
      to: redactDbUrl(flags.to),
      ...report,
      mediaFiles: rewrite?.stats.files ?? 0,
    };
  } finally {
    progress?.done();
    await Promise.allSettled([source.close(), target.close()]);
  }
}

function formatReport(report: Awaited<ReturnType<typeof runCopy>>): string {
  const lines = [`copy ${report.from} -> ${report.to}`];
  for (const c of report.contexts) {
    lines.push(
      `  ${c.contextId}: ${c.memories} memories, ${c.written} written, ${c.vectors} vectors, ${c.edges} edge pairs, ` +
        `semantic ${c.semantic ? 'copied' : 'unchanged'}, ${c.questions} questions` +
        (c.pendingRelationWork > 0
          ? ` (source had ${c.pendingRelationWork} unapplied relation updates)`
          : ''),
    );
  }
  lines.push(
    `${report.meta} meta keys, ${report.mediaFiles} media files, ${report.seconds.toFixed(2)} s`,
    ...report.warnings.map((w) => `  warning: ${w}`),
  );
  return `${lines.join('\n')}\n`;
}
