import type { EmbeddingInput, EmbeddingModel, TokenUsage } from '../providers/model-spec.ts';
import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { ScoredMemory } from './expand-candidates.ts';
import { restrictedSearch, restrictionOf } from './filtered-candidates.ts';
import { denseScore, lexicalScore, SCORE_SCALE_VERSION } from './view-score-scale.ts';

export interface RetrievalQuery {
  /** Prompt, choices and question-image captions: the lexical (and dense text) query. */
  text: string;
  /** Question images, embedded as pixels when the embedding model accepts images. */
  imageUris: readonly string[];
}

export interface MultiViewSearchOptions {
  /** Hits taken per view kind (lexical) and per query vector (dense) before max pooling. */
  limit: number;
  embedding?: EmbeddingModel;
  signal?: AbortSignal;
  /** Only memories passing this filter are searched (restricted before ranking: filtered-candidates.ts). */
  filter?: MemoryFilter;
}

export interface MultiViewSearchResult {
  /** Every memory any view reached, by s desc then id asc (s = max over its views, common scale). */
  ranked: ScoredMemory[];
  /** Per memory, the best score of each view kind that reached it (common scale; dense hits under 'dense'). */
  viewScores: Map<string, Partial<Record<ViewKind | 'dense', number>>>;
  denseFailed: boolean;
  embeddingCall?: { model: string; latencyMs: number; usage: TokenUsage; cached: boolean; error?: string };
}

/** The dense space name a given embedding model writes to (must match what digest used). */
export function embeddingSpace(model: EmbeddingModel): string {
  return `embedding:${model.modelId}`;
}

/** Name of the retriever configuration, part of the prize calibration key. */
export function retrieverName(embedding: EmbeddingModel | undefined): string {
  const dense = embedding ? `+dense:${embedding.modelId}${embedding.supportsImages ? ':vision' : ''}` : '';
  return `bm25-views${dense}@${SCORE_SCALE_VERSION}`;
}

/**
 * Multi-view retrieval (paper eq. 3): s_i = max over the memory's views of the view's score on the common
 * scale (src/retrieval/view-score-scale.ts). Lexical BM25 runs over every view kind (per-context, per-kind
 * statistics); with an embedding model the query text is embedded ONCE (plus each question image when the
 * model takes images) and every query vector searches the context's vectors. A dense failure is reported,
 * never thrown: lexical results still stand.
 */
export async function multiViewSearch(
  store: ArchiveStore,
  contextId: string,
  query: RetrievalQuery,
  options: MultiViewSearchOptions,
): Promise<MultiViewSearchResult> {
  const best = new Map<string, ScoredMemory>();
  const viewScores = new Map<string, Partial<Record<ViewKind | 'dense', number>>>();
  const offer = (hit: ViewHit, score: number, route: ViewKind | 'dense' = hit.kind): void => {
    const views = viewScores.get(hit.memoryId) ?? {};
    if (!(score <= (views[route] ?? -1))) views[route] = score;
    viewScores.set(hit.memoryId, views);
    const current = best.get(hit.memoryId);
    if (current === undefined || score > current.score) {
      best.set(hit.memoryId, { memoryId: hit.memoryId, score, bestView: hit.kind, viewKey: hit.key });
    }
  };
  const restriction = await restrictionOf(store, contextId, options.filter);
  if (restriction.kind === 'ids' && restriction.ids.length === 0)
    return { ranked: [], viewScores, denseFailed: false };
  if (query.text.trim() !== '') {
    const hits = await restrictedSearch(store, contextId, restriction, options.limit, (search) =>
      store.searchLexical(contextId, query.text, search),
    );
    for (const hit of hits) offer(hit, lexicalScore(hit.kind, hit.rawScore));
  }
  let denseFailed = false;
  let embeddingCall: MultiViewSearchResult['embeddingCall'];
  const model = options.embedding;
  if (model) {
    const inputs: EmbeddingInput[] = [];
    if (query.text.trim() !== '') inputs.push({ type: 'text', text: query.text });
    if (model.supportsImages) for (const uri of query.imageUris) inputs.push({ type: 'image', uri });
    if (inputs.length > 0) {
      const started = performance.now();
      try {
        const response = await model.embed(inputs, options.signal ? { signal: options.signal } : undefined);
        embeddingCall = {
          model: model.modelId,
          latencyMs: performance.now() - started,
          usage: response.usage,
          cached: response.cached,
        };
        for (const vector of response.vectors) {
          const hits = await restrictedSearch(store, contextId, restriction, options.limit, (search) =>
            store.searchVectors(contextId, embeddingSpace(model), vector, search),
          );
          for (const hit of hits) offer(hit, denseScore(hit.rawScore), 'dense');
        }
      } catch (error) {
        denseFailed = true;
        embeddingCall = {
          model: model.modelId,
          latencyMs: performance.now() - started,
          usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
          cached: false,
          error: error instanceof Error ? error.message : String(error),
        };
      }
    }
  }
  const ranked = [...best.values()].sort(
    (x, y) => y.score - x.score || (x.memoryId < y.memoryId ? -1 : x.memoryId > y.memoryId ? 1 : 0),
  );
  return { ranked, viewScores, denseFailed, ...(embeddingCall ? { embeddingCall } : {}) };
}
