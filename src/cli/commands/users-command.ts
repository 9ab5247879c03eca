import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { parseInput } from '../../api-schemas/parse-input.ts';
import { userRefSchema } from '../../api-schemas/route-schemas.ts';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import { isPostgresUrl, openGraphmemix, redactDbUrl } from '../../index.ts';
import { toApiUserPage, toApiUserStats } from '../../shell-kit/api-serializers.ts';
import { DB_FLAG, DB_FLAG_HELP } from '../resolve-db.ts';

interface UsersFlags {
  db: string;
  limit?: string;
  cursor?: string;
  user?: string;
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
    .option(
      '--user <id>',
      "one user's stats instead of the list (like GET /v1/users/:id): counts, edges, whether its kNN graph is approximate and whether kNN updates of its writes wait (and why)",
    )
    .option(
      '--json',
      'print the page as one JSON object: {"users":[{"user_id","memories"}],"next_cursor"} (with --user: the stats object)',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ graphmemix users --db archive.db --limit 100
  $ graphmemix users --db archive.db --limit 100 --cursor WyJ1IiwiYm9iIl0 --json
  $ graphmemix users --db archive.db --user alice`,
    )
    .action(async (flags: UsersFlags) => {
      if (flags.user !== undefined) {
        const stats = await runUserStats(flags.db, flags.user);
        process.stdout.write(flags.json ? `${JSON.stringify(stats)}\n` : describeStats(stats));
        return;
      }
      const page = await runUsers(flags);
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(page)}\n`);
        return;
      }
      for (const user of page.users) process.stdout.write(`${user.user_id}\t${user.memories} memories\n`);
      if (page.next_cursor !== null) process.stdout.write(`next page: --cursor ${page.next_cursor}\n`);
    });
}

/** Opens the archive (never creates one), reads one user's stats (HTTP field names), closes it. */
export async function runUserStats(db: string, userId: string): Promise<Record<string, unknown>> {
  // The id rule every shell applies (HTTP, MCP): a client-named id is checked before anything is opened.
  parseInput(userRefSchema, { user_id: userId });
  assertArchive(db);
  // Read-only: showing a user's state must not change it (a writer would drain its backlog at open).
  const gm = await openGraphmemix({ db, readonly: true });
  try {
    const stats = await gm.userStats(userId);
    if (stats === undefined) {
      throw new GraphmemixError('NOT_FOUND', `user ${userId} not found`, { location: { field: 'user' } });
    }
    return toApiUserStats(stats);
  } finally {
    await gm.close();
  }
}

/** The stats as lines a person reads. */
function describeStats(stats: Record<string, unknown>): string {
  const lines = [`${String(stats.user_id)}: ${String(stats.memories)} memories`];
  const counts = (value: unknown) =>
    Object.entries((value ?? {}) as Record<string, number>)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
  lines.push(`  by kind: ${counts(stats.by_kind) || 'none'}`, `  edges: ${counts(stats.edges) || 'none'}`);
  if (stats.last_write !== null) lines.push(`  last write: ${String(stats.last_write)}`);
  const approximate = stats.knn_approximate as { reason: string; since: string; error?: string } | null;
  if (approximate !== null) {
    const why =
      approximate.error === undefined ? approximate.reason : `${approximate.reason}: ${approximate.error}`;
    lines.push(
      `  kNN graph approximate since ${approximate.since} (${why}); \`graphmemix compact\` rebuilds it`,
    );
  }
  const pending = stats.semantic_pending as { drain_failure: Record<string, unknown> | null } | null;
  if (pending !== null) {
    const failure = pending.drain_failure;
    lines.push(
      failure === null
        ? '  kNN updates of recent writes: waiting for their turn'
        : `  kNN updates of recent writes: failed ${String(failure.attempts)} time(s) since ${String(failure.since)}: ${String(failure.error)}; ${failure.next_retry_at === null ? 'the next write or open tries again' : `next try ${String(failure.next_retry_at)}`}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function assertArchive(db: string): void {
  if (!isPostgresUrl(db) && !existsSync(db)) {
    throw new GraphmemixError('NOT_FOUND_PATH', `no such archive: ${redactDbUrl(db)}`, {
      location: { file: db },
    });
  }
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
  assertArchive(flags.db);
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
