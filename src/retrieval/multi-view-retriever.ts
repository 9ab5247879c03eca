import type { EmbeddingInput, EmbeddingModel, TokenUsage } from '../providers/model-spec.ts';
import type { ArchiveStore, MemoryFilter } from '../store/archive-store-spec.ts';
import { MONTH_NAMES, WEEKDAY_NAMES_LOWER } from '../types/calendar-names.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { ScoredMemory } from './expand-candidates.ts';
import { restrictedSearch, restrictionOf } from './filtered-candidates.ts';
import { type QueryExpansion, WeightedHits } from './query-expansion.ts';
import { tokenize } from './tokenize.ts';
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
  /**
   * Leave out of every lexical search a view kind where the query's terms are all common (in more than half of
   * its documents: LexicalSearchOptions.skipCommonOnlyKinds). The question pipeline sets it: such a kind's hits
   * are a write-order tie (a two-person chat's metadata view for a question naming a participant); the flat
   * search does not, so a search for a name alone still finds the memories that hold it.
   */
  skipCommonOnlyKinds?: boolean;
  /** Weighted extra lexical queries (temporal terms, synonyms, names): src/retrieval/query-expansion.ts. */
  expansions?: readonly QueryExpansion[];
  /** Pseudo-relevance feedback inside the context: a second query from the top memories' text views. */
  feedback?: FeedbackOptions;
  /**
   * The text views of some memories, for the feedback (default: `store.getViews`, text kind). The pipeline
   * builds them from its cached pool records: the top memories are seeds it reads anyway.
   */
  textViews?: (memoryIds: readonly string[]) => Promise<string[]>;
}

export interface FeedbackOptions {
  /** Top memories (by s after the first queries) whose text views give the feedback terms. */
  docs: number;
  /** At most this many terms, the ones in most feedback documents (ties: most occurrences, then term). */
  terms: number;
  /** A term must occur in at least this many feedback documents. */
  minDocs: number;
  weight: number;
  /**
   * View kinds the shared day is searched in (default text and metadata). The text view alone ("[17 June
   * 2024] Ana: ...") reaches the same day's messages with one kind's postings instead of two.
   */
  dayKinds?: readonly ViewKind[];
}

export interface MultiViewSearchResult {
  /** Every memory any view reached, by s desc then id asc (s = max over its views, common scale). */
  ranked: ScoredMemory[];
  /** Per memory, the best score of each view kind that reached it (common scale; dense hits under 'dense'). */
  viewScores: Map<string, Partial<Record<ViewKind | 'dense', number>>>;
  denseFailed: boolean;
  /**
   * View kinds whose lexical search stopped at the store's work bound with a document it had not read or
   * scored still able to rank (LexicalSearchOptions.onBounded): their hits are the best within the bound.
   */
  lexicalBounded: ViewKind[];
  /** The expansions that were searched (feedback included), for the trace. */
  expansions: QueryExpansion[];
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
    return { ranked: [], viewScores, denseFailed: false, lexicalBounded: [], expansions: [] };
  const bounded = new Set<ViewKind>();
  const onBounded = (kind: ViewKind) => {
    bounded.add(kind);
  };
  const lexical = (text: string, kinds?: readonly ViewKind[]) =>
    restrictedSearch(store, contextId, restriction, options.limit, (search) =>
      store.searchLexical(contextId, text, {
        ...search,
        ...(kinds ? { kinds } : {}),
        ...(options.skipCommonOnlyKinds ? { skipCommonOnlyKinds: true } : {}),
        onBounded,
      }),
    );
  const expansions = (options.expansions ?? []).filter((e) => e.terms.length > 0 && e.weight > 0);
  if (query.text.trim() !== '') {
    const hits = await lexical(query.text);
    if (expansions.length === 0 && options.feedback === undefined) {
      // The unexpanded path: one query, scores exactly as before expansion existed.
      for (const hit of hits) offer(hit, lexicalScore(hit.kind, hit.rawScore));
    } else {
      const weighted = new WeightedHits();
      weighted.add(hits, 1);
      const search = async (expansion: QueryExpansion) =>
        weighted.add(await lexical(expansion.terms.join(' '), expansion.kinds), expansion.weight);
      for (const expansion of expansions) await search(expansion);
      if (options.feedback) {
        const textViews =
          options.textViews ??
          (async (ids: readonly string[]) =>
            (await store.getViews(contextId, ids)).filter((v) => v.kind === 'text').map((v) => v.text));
        for (const feedback of await feedbackExpansions(textViews, query.text, weighted, options.feedback)) {
          expansions.push(feedback);
          await search(feedback);
        }
      }
      for (const hit of weighted.hits()) offer(hit, lexicalScore(hit.kind, hit.rawScore));
    }
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
  return {
    ranked,
    viewScores,
    denseFailed,
    lexicalBounded: [...bounded].sort(),
    expansions,
    ...(embeddingCall ? { embeddingCall } : {}),
  };
}

const MESSAGE_PREFIX = /^\[[^\]\n]{1,40}\]\s*(?:[^:\n]{1,80}:\s)?/;
const PREFIX_DAY = /^\[(\d{1,2}) ([A-Z][a-z]+) (\d{4})\]/;
const MONTH_INDEX = MONTH_NAMES;
const WEEKDAYS_LOWER = WEEKDAY_NAMES_LOWER;

/** "[17 June 2024] ..." -> "17 monday" (the day number and weekday of a message's text view), else undefined. */
function messageDay(text: string): string | undefined {
  const match = PREFIX_DAY.exec(text);
  if (!match) return undefined;
  const month = MONTH_INDEX.indexOf(match[2]!);
  if (month < 0) return undefined;
  const date = new Date(Date.UTC(Number(match[3]), month, Number(match[1])));
  return Number.isNaN(date.getTime()) ? undefined : `${Number(match[1])} ${WEEKDAYS_LOWER[date.getUTCDay()]}`;
}

/**
 * Pseudo-relevance feedback from the text views of the top `docs` memories (by the weighted lexical score so
 * far), two expansions at `weight`:
 * - the day they share (at least `minDocs` of them; at most two days), as its day number and weekday,
 *   searched in `dayKinds` (default text and metadata): memories of the same day, usually the same session,
 *   come closer. These are the rarest date terms (month and year are in every memory of a month and cost
 *   the longest postings of the context);
 * - up to `terms` words they share (in at least `minDocs`), not in the question, the "[day] speaker:" prefix
 *   left out; BM25's own idf weighs the common ones down.
 * Reads `docs` memories' views: no cost that grows with the context.
 */
async function feedbackExpansions(
  textViews: (memoryIds: readonly string[]) => Promise<string[]>,
  queryText: string,
  weighted: WeightedHits,
  options: FeedbackOptions,
): Promise<QueryExpansion[]> {
  const best = weighted.bestPerMemory(lexicalScore);
  const top = [...best.entries()]
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, options.docs)
    .map(([id]) => id);
  if (top.length < options.minDocs) return [];
  const views = await textViews(top);
  // The question's own terms, read only when there is something to leave out of the feedback.
  let askedTerms: Set<string> | undefined;
  const asked = () => {
    askedTerms ??= new Set(tokenize(queryText.slice(0, 4_000)));
    return askedTerms;
  };
  const stats = new Map<string, { docs: number; count: number }>();
  const days = new Map<string, number>();
  for (const view of views) {
    const day = messageDay(view);
    if (day !== undefined) days.set(day, (days.get(day) ?? 0) + 1);
    // The shipped feedback takes no words (FEEDBACK_EXPANSION.terms 0): tokenizing five texts would be its
    // largest CPU cost for nothing.
    if (options.terms <= 0) continue;
    const seen = new Set<string>();
    // The "[day] speaker:" prefix of a message's text view (build-views.ts `searchableText`) is in every
    // message of that day and speaker: searching those terms again costs the longest postings of the context.
    for (const term of tokenize(view.slice(0, 4_000).replace(MESSAGE_PREFIX, ''))) {
      if (asked().has(term)) continue;
      const stat = stats.get(term) ?? { docs: 0, count: 0 };
      stat.count += 1;
      if (!seen.has(term)) stat.docs += 1;
      seen.add(term);
      stats.set(term, stat);
    }
  }
  const terms = [...stats.entries()]
    .filter(([, stat]) => stat.docs >= options.minDocs)
    .sort((x, y) => y[1].docs - x[1].docs || y[1].count - x[1].count || (x[0] < y[0] ? -1 : 1))
    .slice(0, options.terms)
    .map(([term]) => term);
  const shared = [...days.entries()]
    .filter(([, count]) => count >= options.minDocs)
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, 2);
  const dayTerms: string[] = [];
  for (const [day] of shared) {
    for (const term of tokenize(day)) if (!asked().has(term) && !dayTerms.includes(term)) dayTerms.push(term);
  }
  const out: QueryExpansion[] = [];
  if (dayTerms.length > 0) {
    const kinds = options.dayKinds ?? ['text', 'metadata'];
    out.push({ source: 'feedback', terms: dayTerms, weight: options.weight, kinds });
  }
  if (terms.length > 0) out.push({ source: 'feedback', terms, weight: options.weight });
  return out;
}
