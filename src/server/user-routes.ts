import type { Hono } from 'hono';
import { parseInput } from '../api-schemas/parse-input.ts';
import { userRefSchema } from '../api-schemas/route-schemas.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { httpError } from '../shell-kit/error-response.ts';
import { laneOf } from '../shell-kit/user-scope.ts';

/**
 * /v1/users/:user_id: forget a whole user. Every memory with its views, vectors, edges and questions goes in
 * one transaction, the store's files keep no copy of the text, and the user's uploaded media is removed.
 */
export function registerUserRoutes(app: Hono, graphmemix: Graphmemix): void {
  app.delete('/v1/users/:user_id', async (c) => {
    const input = parseInput(userRefSchema, { user_id: c.req.param('user_id') });
    const report = await graphmemix.deleteUser(input.user_id, laneOf(c));
    if (!report.deleted) throw httpError('NOT_FOUND', `user ${input.user_id} has no archive`);
    return c.json({
      user_id: input.user_id,
      deleted: true,
      memories: report.memories,
      media_files: report.mediaFiles,
    });
  });
}
