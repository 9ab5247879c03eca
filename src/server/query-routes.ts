import type { Hono } from 'hono';
import { parseInput } from '../api-schemas/parse-input.ts';
import { answerSchema, retrieveSchema, searchSchema, viewSchema } from '../api-schemas/route-schemas.ts';
import { toMemoryFilter, toQuestionCall } from '../api-schemas/to-pipeline-input.ts';
import type { Graphmemix } from '../graphmemix-api.ts';
import { toApiAnswer, toApiRetrieval, toApiSearch } from '../shell-kit/api-serializers.ts';
import { laneOf, requireUser } from '../shell-kit/user-scope.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { renderViewerHtml } from '../viewer/render-viewer-html.ts';
import { encodeMediaRef, type MediaRef } from './media-ref.ts';
import { readJson } from './read-body.ts';

/** Read routes: flat search, evidence forest, answer, and the viewer page. */
export function registerQueryRoutes(
  app: Hono,
  graphmemix: Graphmemix,
  /** A browser URL of one media ref of a user (signed, short-lived), for viewer thumbnails. */
  mediaLink?: (userId: string, ref: string) => string,
): void {
  app.post('/v1/search', async (c) => {
    const input = parseInput(searchSchema, await readJson(c));
    requireUser(c, input.user_id);
    // Every route hands the raw request's signal on: @hono/node-server aborts it when the client leaves.
    const found = await graphmemix.searchMemories(input.user_id, input.query, {
      ...(input.k === undefined ? {} : { k: input.k }),
      ...(input.filters === undefined ? {} : { filter: toMemoryFilter(input.filters) }),
      ...laneOf(c),
      signal: c.req.raw.signal,
    });
    return c.json(toApiSearch(input.user_id, found));
  });

  app.post('/v1/retrieve', async (c) => {
    const input = parseInput(retrieveSchema, await readJson(c));
    requireUser(c, input.user_id);
    const { question, options } = toQuestionCall(input);
    const result = await graphmemix.retrieve(input.user_id, question, {
      ...options,
      ...laneOf(c),
      signal: c.req.raw.signal,
    });
    return c.json(toApiRetrieval(input.user_id, result));
  });

  app.post('/v1/answer', async (c) => {
    const input = parseInput(answerSchema, await readJson(c));
    requireUser(c, input.user_id);
    const { question, options } = toQuestionCall(input);
    const result = await graphmemix.answer(input.user_id, question, {
      ...options,
      ...laneOf(c),
      signal: c.req.raw.signal,
    });
    return c.json(toApiAnswer(input.user_id, result));
  });

  app.get('/view', async (c) => {
    const input = parseInput(viewSchema, {
      user_id: c.req.query('user_id'),
      q: c.req.query('q'),
      k: c.req.query('k'),
    });
    requireUser(c, input.user_id);
    const result = await graphmemix.retrieve(input.user_id, input.q, {
      ...(input.k === undefined ? {} : { k: input.k }),
      ...laneOf(c),
      signal: c.req.raw.signal,
    });
    const records = new Map<string, MemoryRecord>();
    for (const candidate of result.pool) {
      const record = await graphmemix.getMemory(input.user_id, candidate.memoryId);
      if (record) records.set(record.id, record);
    }
    return c.html(
      renderViewerHtml([{ result, records }], {
        subtitle: `user ${input.user_id}`,
        ...(mediaLink === undefined
          ? {}
          : { mediaUrl: (ref: MediaRef) => mediaLink(input.user_id, encodeMediaRef(ref)) }),
      }),
    );
  });
}
