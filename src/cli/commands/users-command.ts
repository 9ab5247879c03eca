import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { isPostgresUrl, openGraphmemix, redactDbUrl } from '../../index.ts';
import { toApiUserPage } from '../../shell-kit/api-serializers.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface UsersFlags {
  db: string;
  limit?: string;
  cursor?: string;
  json?: boolean;
}

export function registerUsersCommand(program: Command): void {
  program
    .command('users')
    .description(
      "List the archive's users (contexts) with their memory counts, one keyset page at a time (like GET /v1/users).",
    )
    .option(DB_FLAG, DB_FLAG_HELP)
    .option('--limit <n>', 'page size, 1..200 (default 50)')
    .option('--cursor <cursor>', 'next_cursor of the previous page')
    .option('--json', 'print the page as one JSON object: {"users":[{"user_id","memories"}],"next_cursor"}')
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix users --db archive.db --limit 100
  $ graphmemix users --db archive.db --limit 100 --cursor WyJ1IiwiYm9iIl0 --json`,
    )
    .action(async (flags: UsersFlags) => {
      const page = await runUsers(flags);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(page)}\n`);
        return;
      }
      for (const user of page.users) process.stdout.write(`${user.user_id}\t${user.memories} memories\n`);
      if (page.next_cursor !== null) process.stdout.write(`next page: --cursor ${page.next_cursor}\n`);
    });
}

/** Opens the archive (never creates one), reads one page of users, and closes it also on failure. */
export async function runUsers(
  flags: UsersFlags,
): Promise<{ users: { user_id: string; memories: number }[]; next_cursor: string | null }> {
  const limit = flags.limit === undefined ? undefined : Number(flags.limit);
  if (limit !== undefined && (!/^\d+$/.test(flags.limit!) || !Number.isSafeInteger(limit))) {
    throw new GraphmemixError('INVALID_INPUT', `--limit must be an integer, got "${flags.limit}"`, {
      location: { field: 'limit' },
    });
  }
  if (!isPostgresUrl(flags.db) && !existsSync(flags.db)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no such archive: ${redactDbUrl(flags.db)}`, {
      location: { file: flags.db },
    });
  }
  const gm = await openGraphmemix({ db: flags.db });
  try {
    const page = await gm.listUsers({
      ...(limit === undefined ? {} : { limit }),
      ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
    });
    return toApiUserPage(page) as {
      users: { user_id: string; memories: number }[];
      next_cursor: string | null;
    };
  } finally {
    await gm.close();
  }
}
