import { z } from 'zod';
import type { SearchFlag, SearchResult } from './graphmemix-api.ts';
import { assertNotForgetting } from './graphmemix-forget.ts';
import type { ModelSet } from './providers/model-spec.ts';
import { multiViewSearch } from './retrieval/multi-view-retriever.ts';
import { parseWithSchema } from './schemas/parse-with-schema.ts';
import { MAX_SEARCH_K, questionTextSchema } from './schemas/question-schema.ts';
import type { ArchiveStore, MemoryFilter } from './store/archive-store-spec.ts';

/** The library's search arguments: THE question text schema and the routes' `k` bound. */
const searchArgsSchema = z.object({
  query: questionTextSchema,
  k: z.number().int().min(1).max(MAX_SEARCH_K).optional(),
});

/**
 * The flat search of the API (`searchMemories`): multi-view retrieval alone, its top `k` with their records,
 * and flags for what limited it (a lexical search stopped at its work bounds, a failed dense view).
 */
export async function searchMemoryHits(
  store: ArchiveStore,
  models: ModelSet,
  contextId: string,
  query: string,
  searchOptions: { k?: number; signal?: AbortSignal; filter?: MemoryFilter },
): Promise<SearchResult> {
  // The library takes the same bounds as the HTTP and MCP search (k NaN threw a TypeError, -5 gave 19 hits).
  const input = parseWithSchema(searchArgsSchema, { query, k: searchOptions.k });
  const k = input.k ?? 10;
  query = input.query;
  await assertNotForgetting(store, contextId);
  const result = await multiViewSearch(
    store,
    contextId,
    { text: query, imageUris: [] },
    {
      limit: Math.max(k, 24),
      ...(models.embedding ? { embedding: models.embedding } : {}),
      ...(searchOptions.signal ? { signal: searchOptions.signal } : {}),
      ...(searchOptions.filter ? { filter: searchOptions.filter } : {}),
    },
  );
  const top = result.ranked.slice(0, k);
  const records = new Map(
    (
      await store.getMemories(
        contextId,
        top.map((m) => m.memoryId),
      )
    ).map((r) => [r.id, r]),
  );
  const hits = top.flatMap((m) => {
    const record = records.get(m.memoryId);
    return record ? [{ memoryId: m.memoryId, score: m.score, bestView: m.bestView, record }] : [];
  });
  const flags: SearchFlag[] = [];
  if (result.lexicalBounded.length > 0) flags.push('lexical_search_bounded');
  if (result.denseFailed) flags.push('dense_retrieval_failed');
  return { hits, flags };
}
