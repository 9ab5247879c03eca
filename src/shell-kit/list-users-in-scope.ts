import type { Graphmemix, ListUsersOptions, UserPage } from '../graphmemix-api.ts';
import { decodeUserCursor, encodeUserCursor, pageLimit } from '../graphmemix-memory-verbs.ts';
import type { UserScope } from './user-scope.ts';

/**
 * The page of users a caller's key may see (GET /v1/users, MCP list_users). A key for every user pages the
 * archive (listUsers: keyset over user ids); a key bound to some users pages ITS users in id order, keeping
 * those that exist, so other users are never listed and the cost follows the key's list, never the archive.
 * Same cursor format either way.
 */
export async function listUsersInScope(
  graphmemix: Graphmemix,
  scope: UserScope | undefined,
  options: ListUsersOptions = {},
): Promise<UserPage> {
  if (scope?.all) return graphmemix.listUsers(options);
  const limit = pageLimit(options.limit);
  const afterId = options.cursor === undefined ? undefined : decodeUserCursor(options.cursor);
  const ids = [...(scope?.users ?? [])].filter((id) => afterId === undefined || id > afterId).sort();
  const users: UserPage['users'] = [];
  for (const id of ids) {
    const stats = await graphmemix.userStats(id);
    if (!stats) continue;
    if (users.length === limit) return { users, nextCursor: encodeUserCursor(users[limit - 1]!.userId) };
    users.push({ userId: id, memories: stats.memories });
  }
  return { users };
}
