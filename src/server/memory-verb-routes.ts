import type { Hono } from 'hono';
import { parseInput } from '../api-schemas/parse-input.ts';
import {
  listMemoriesSchema,
  listUsersSchema,
  memoryHistorySchema,
  updateMemorySchema,
  userRefSchema,
} from '../api-schemas/route-schemas.ts';
import { toMemoryFilter } from '../api-schemas/to-pipeline-input.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import {
  toApiHistory,
  toApiMemoryPage,
  toApiUpdate,
  toApiUserPage,
  toApiUserStats,
} from '../shell-kit/api-serializers.ts';
import { confinePatchMedia } from '../shell-kit/confine-record-media.ts';
import { httpError } from '../shell-kit/error-response.ts';
import { listUsersInScope } from '../shell-kit/list-users-in-scope.ts';
import { laneOf, requireUser } from '../shell-kit/user-scope.ts';
import { queryObject } from './query-params.ts';
import { readJson } from './read-body.ts';

/**
 * The memory verbs next to add/get/delete: list (keyset pages, filters), update with history, and the
 * users' list and stats. Each is user-bound like every route: `requireUser` right after parsing, and
 * another user's data answers 404 exactly as a missing one.
 */
export function registerMemoryVerbRoutes(
  app: Hono,
  graphmemix: Graphmemix,
  /** The archive's media store: an update may reference files only in `<mediaDir>/<user_id>/`, as an add. */
  mediaDir: string | undefined,
): void {
  app.get('/v1/memories', async (c) => {
    const input = parseInput(listMemoriesSchema, queryObject(c));
    requireUser(c, input.user_id);
    const page = await graphmemix.listMemories(input.user_id, {
      ...(input.limit === undefined ? {} : { limit: input.limit }),
      ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
      ...(input.filters === undefined ? {} : { filter: toMemoryFilter(input.filters) }),
      ...laneOf(c),
    });
    return c.json(toApiMemoryPage(input.user_id, page));
  });

  app.patch('/v1/memories/:id', async (c) => {
    const body = await readJson(c);
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {};
    const input = parseInput(updateMemorySchema, { ...fields, memory_id: c.req.param('id') });
    requireUser(c, input.user_id, `memory ${input.memory_id} not found for this user`);
    const { user_id, memory_id, ...patch } = input;
    await confinePatchMedia(patch, { userId: user_id, mediaDir });
    const report = await graphmemix.updateMemory(user_id, memory_id, patch, laneOf(c));
    return c.json(toApiUpdate(user_id, report));
  });

  app.get('/v1/memories/:id/history', async (c) => {
    const input = parseInput(memoryHistorySchema, queryObject(c, { memory_id: c.req.param('id') }));
    requireUser(c, input.user_id, `memory ${input.memory_id} not found for this user`);
    const page = await graphmemix.memoryHistoryPage(input.user_id, input.memory_id, {
      ...(input.limit === undefined ? {} : { limit: input.limit }),
      ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
    });
    if (!page) throw httpError('NOT_FOUND', `memory ${input.memory_id} not found for this user`);
    return c.json(toApiHistory(input.user_id, input.memory_id, page));
  });

  // The users this key may see (others are not listed: their existence is not the caller's business).
  app.get('/v1/users', async (c) => {
    const input = parseInput(listUsersSchema, queryObject(c));
    const page = await listUsersInScope(graphmemix, c.get('userScope'), {
      ...(input.limit === undefined ? {} : { limit: input.limit }),
      ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
    });
    return c.json(toApiUserPage(page));
  });

  app.get('/v1/users/:user_id', async (c) => {
    const input = parseInput(userRefSchema, queryObject(c, { user_id: c.req.param('user_id') }));
    requireUser(c, input.user_id);
    const stats = await graphmemix.userStats(input.user_id);
    if (!stats) throw httpError('NOT_FOUND', `user ${input.user_id} not found`);
    return c.json(toApiUserStats(stats));
  });
}
