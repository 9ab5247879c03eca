import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  listMemoriesSchema,
  listUsersSchema,
  memoryHistorySchema,
  memoryRefSchema,
  updateMemorySchema,
  userRefSchema,
} from '../api-schemas/route-schemas.ts';
import { toMemoryFilter } from '../api-schemas/to-pipeline-input.ts';
import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import {
  toApiHistory,
  toApiMemoryPage,
  toApiUpdate,
  toApiUserPage,
  toApiUserStats,
} from '../shell-kit/api-serializers.ts';
import { confinePatchMedia } from '../shell-kit/confine-record-media.ts';
import { listUsersInScope } from '../shell-kit/list-users-in-scope.ts';
import { ALL_USERS, type UserScope } from '../shell-kit/user-scope.ts';
import { runTool } from './run-tool.ts';

/**
 * list_users, list_memories, get_memory, update_memory, memory_history, user_stats: the HTTP memory verbs as tools,
 * with the same schemas and answers. `allow` is the server's scope check (NOT_FOUND outside the caller's users).
 */
export function registerMemoryVerbTools(
  server: McpServer,
  graphmemix: Graphmemix,
  allow: (userId: string, notFound?: string) => void,
  scope: UserScope = ALL_USERS,
  /** Runs list_memories, whose pages use the read workers as questions do (the caller's question share). */
  runRead: typeof runTool = runTool,
  /** The caller's lane in the read workers' queue (list_memories pages) and the writer's (update_memory). */
  asker: { lane?: string } = {},
  /** The archive's media store: update_memory may reference files only in `<mediaDir>/<user_id>/`, as add_memory. */
  mediaDir?: string,
): void {
  const notFound = (id: string) => `memory ${id} not found for this user`;

  server.registerTool(
    'list_users',
    {
      title: 'List users',
      description:
        'Page through the users (archives) this server may touch, in id order, each with its memory count. ' +
        'Pass `next_cursor` back as `cursor` for the next page (null on the last page).',
      inputSchema: listUsersSchema,
      annotations: { readOnlyHint: true },
    },
    (input) =>
      runTool(async () =>
        toApiUserPage(
          await listUsersInScope(graphmemix, scope, {
            ...(input.limit === undefined ? {} : { limit: input.limit }),
            ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
          }),
        ),
      ),
  );

  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description:
        "Page through the user's memories in the order they were added, optionally filtered by agent_id, " +
        'run_id, metadata values or event time (from/to). Pass `next_cursor` back as `cursor` for the next page; ' +
        'a filtered page may hold fewer memories than the limit, or none, and still have one (it stops after ' +
        'bounded work): the list ends only where next_cursor is null.',
      inputSchema: listMemoriesSchema,
      annotations: { readOnlyHint: true },
    },
    (input) =>
      runRead(async () => {
        allow(input.user_id);
        const page = await graphmemix.listMemories(input.user_id, {
          ...(input.limit === undefined ? {} : { limit: input.limit }),
          ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
          ...(input.filters === undefined ? {} : { filter: toMemoryFilter(input.filters) }),
          ...asker,
        });
        return toApiMemoryPage(input.user_id, page);
      }),
  );

  server.registerTool(
    'get_memory',
    {
      title: 'Get a memory',
      description:
        'Read one memory by id, with every field (text, event timestamp, recordedAt, scopes, metadata). ' +
        'Fails with NOT_FOUND if the id does not exist.',
      inputSchema: memoryRefSchema,
      annotations: { readOnlyHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id, notFound(input.memory_id));
        const memory = await graphmemix.getMemory(input.user_id, input.memory_id);
        if (!memory) throw new GraphmemixError('NOT_FOUND', notFound(input.memory_id));
        return { user_id: input.user_id, memory };
      }),
  );

  server.registerTool(
    'update_memory',
    {
      title: 'Update a memory',
      description:
        'Change a stored memory: the fields you give (text, timestamp, metadata, ...) replace the stored ones. ' +
        'The old version stays in memory_history, and questions use the new one. Use it when a fact changed ' +
        '("the appointment moved to Friday").',
      inputSchema: updateMemorySchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id, notFound(input.memory_id));
        const { user_id, memory_id, ...patch } = input;
        await confinePatchMedia(patch, { userId: user_id, mediaDir });
        return toApiUpdate(user_id, await graphmemix.updateMemory(user_id, memory_id, patch, asker));
      }),
  );

  server.registerTool(
    'memory_history',
    {
      title: 'History of a memory',
      description:
        'Every version of a memory, oldest first, each with the time it was recorded and its event time, in ' +
        'pages (pass next_cursor back as cursor; the current version ends the last page, whose next_cursor is ' +
        'null). Use it to see what a memory said before it was updated.',
      inputSchema: memoryHistorySchema,
      annotations: { readOnlyHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id, notFound(input.memory_id));
        const page = await graphmemix.memoryHistoryPage(input.user_id, input.memory_id, {
          ...(input.limit === undefined ? {} : { limit: input.limit }),
          ...(input.cursor === undefined ? {} : { cursor: input.cursor }),
        });
        if (!page) throw new GraphmemixError('NOT_FOUND', notFound(input.memory_id));
        return toApiHistory(input.user_id, input.memory_id, page);
      }),
  );

  server.registerTool(
    'user_stats',
    {
      title: "Statistics of a user's archive",
      description:
        'How many memories the user has, by kind, links by type, and when the archive was last written.',
      inputSchema: userRefSchema,
      annotations: { readOnlyHint: true },
    },
    (input) =>
      runTool(async () => {
        allow(input.user_id);
        const stats = await graphmemix.userStats(input.user_id);
        if (!stats) throw new GraphmemixError('NOT_FOUND', `user ${input.user_id} not found`);
        return toApiUserStats(stats);
      }),
  );
}
