import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { isPostgresUrl, openStore } from '../../index.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface VacuumFlags {
  db: string;
  json?: boolean;
}

export interface VacuumReport {
  db: string;
  bytesBefore: number;
  bytesAfter: number;
  seconds: number;
}

export function registerVacuumCommand(program: Command): void {
  program
    .command('vacuum')
    .description(
      'Rewrite a SQLite archive so no byte of deleted memories stays in unused page space (explicit maintenance: walks the whole file).',
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--json', 'print one JSON object: {"db","bytesBefore","bytesAfter","seconds"}')
    .addHelpText(
      'after',
      `
SQLite zeroes deleted rows, but a page it rebalanced can keep stale copies of rows that were moved and later
deleted in its unused space. VACUUM rebuilds every page; the WAL is truncated after it. It holds the write
lock for the whole rewrite (minutes for millions of memories): run it in a quiet hour. After deletes, run
\`graphmemix compact\` first: a word several deleted memories shared stays in the frozen IDF snapshot until then.

Example:
  $ graphmemix vacuum --db archive.db`,
    )
    .action(async (flags: VacuumFlags) => {
      const report = await runVacuum(flags.db);
      const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(report)}\n`
          : `vacuumed ${report.db}: ${mb(report.bytesBefore)} MB -> ${mb(report.bytesAfter)} MB in ${report.seconds} s\n`,
      );
    });
}

/** Opens the SQLite archive (never creates one), rewrites it, closes it. */
export async function runVacuum(db: string): Promise<VacuumReport> {
  if (isPostgresUrl(db)) {
    throw new GraphmemixError(
      'UNSUPPORTED',
      'vacuum rewrites a SQLite file; on PostgreSQL run VACUUM FULL as the owner of the tables',
      { location: { field: 'db' } },
    );
  }
  if (!existsSync(db)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no store at ${db}`, { location: { file: db } });
  }
  const store = await openStore(db);
  try {
    if (store.vacuum === undefined) {
      throw new GraphmemixError('UNSUPPORTED', `the store at ${db} has no vacuum`);
    }
    const started = performance.now();
    const { bytesBefore, bytesAfter } = await store.vacuum();
    return { db, bytesBefore, bytesAfter, seconds: Math.round(performance.now() - started) / 1000 };
  } finally {
    await store.close();
  }
}
