import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { isPostgresUrl, loadModelConfig, openGraphmemix, redactDbUrl } from '../../index.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface ForgetFlags {
  db: string;
  context: string;
  memory?: string;
  json?: boolean;
}

export function registerForgetCommand(program: Command): void {
  program
    .command('forget')
    .description(
      'Delete a whole archive context (a user) or one memory: rows, index entries, vectors, edges and the ' +
        "archive's media files; no copy of the text stays in the database files.",
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .requiredOption('--context <id>', 'archive context (user id) to forget')
    .option('--memory <id>', 'forget only this memory of the context')
    .option('--json', 'print the result as one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix forget --db archive.db --context alice
  $ graphmemix forget --db archive.db --context alice --memory m42 --json`,
    )
    .action(async (flags: ForgetFlags) => {
      const result = await runForget(flags);
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(result)}\n`
          : `forgot ${flags.memory === undefined ? `context ${flags.context}` : `memory ${flags.memory}`}: ${result.memories} memories, ${result.media_files} media files\n`,
      );
    });
}

/** Opens the archive (never creates one), deletes, and closes the store also on failure. */
export async function runForget(
  flags: ForgetFlags,
): Promise<{ user_id: string; memory_id?: string; deleted: true; memories: number; media_files: number }> {
  if (flags.context.trim() === '') {
    throw new GraphmemixError('INVALID_INPUT', '--context must not be empty', {
      location: { field: 'context' },
    });
  }
  if (!isPostgresUrl(flags.db) && !existsSync(flags.db)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no such archive: ${redactDbUrl(flags.db)}`, {
      location: { file: flags.db },
    });
  }
  // The media folder beside the database is where `serve` keeps uploads (see mediaDirFor).
  // A Postgres archive's folder comes from the config (mediaDir / $GRAPHMEMIX_MEDIA_DIR) as in `serve`.
  const { mediaDirPath } = await import('../../shell-kit/open-shell-graphmemix.ts');
  const mediaDir = mediaDirPath(flags.db, loadModelConfig().mediaDir);
  const gm = await openGraphmemix({ db: flags.db, mediaDir });
  try {
    if (flags.memory !== undefined) {
      if (!(await gm.deleteMemory(flags.context, flags.memory))) {
        throw new GraphmemixError(
          'NOT_FOUND',
          `memory ${flags.memory} not found in context ${flags.context}`,
        );
      }
      // The HTTP API's field names (DELETE /v1/memories/:id, DELETE /v1/users/:id).
      return { user_id: flags.context, memory_id: flags.memory, deleted: true, memories: 1, media_files: 0 };
    }
    const report = await gm.forgetContext(flags.context);
    if (!report.deleted) throw new GraphmemixError('NOT_FOUND', `context ${flags.context} does not exist`);
    return {
      user_id: flags.context,
      deleted: true,
      memories: report.memories,
      media_files: report.mediaFiles,
    };
  } finally {
    await gm.close();
  }
}
