import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import {
  compareNeighbours,
  entersList,
  exactTopK,
  insertIntoList,
  pairScore,
  type TopKSearchOptions,
} from './exact-top-k-search.ts';
import type { SparseDoc } from './frozen-tfidf.ts';
import type { MemoKnnSource } from './memo-knn-source.ts';

export interface InsertChunkOptions {
  k: number;
  /** Nearest stored memories searched per newcomer; their lists are the ones it may enter. */
  pool: number;
  df: ReadonlyMap<string, number>;
  search: TopKSearchOptions;
  /** Exact reverse search: the stored lists a newcomer may enter (a superset); default its pool. */
  reverse?: ((doc: SparseDoc) => Promise<string[]>) | undefined;
}

export interface InsertedChunk {
  /** The newcomers with their lists (exact top-k over the stored memories and the chunk). */
  put: SemanticDoc[];
  /** Stored lists the newcomers entered, as they are after the chunk. */
  lists: Array<{ memoryId: string; neighbours: SemanticNeighbour[] }>;
}

/**
 * Inserts a chunk of newcomers into the kNN lists, reading the index (through `source`, which must not see
 * the chunk) and writing nothing: the caller writes the result in one writeDocs.
 *
 * A newcomer's list is exact over the stored memories and the whole chunk: the top of the union is among
 * the stored top-pool (one forward search) and the chunk's own pairs (scored in memory). So it is at least
 * as exact as inserting one at a time, where a newcomer saw only the ones before it. Each newcomer then
 * enters the stored lists of its pool whose k-th entry it beats (neighbourhood reverse search,
 * docs/semantic-knn.md); entries are kept in memory, so a list entered by several newcomers is read once
 * and ends as the top-k of its old entries and every newcomer that beat its k-th at the time, which is the
 * top-k of the old list and all newcomers that score above its final k-th: order does not matter. A stored
 * list is read only when the newcomer's score reaches its entry bound (listThreshold, with the vectors): a
 * score below it cannot enter, and most pool members' lists are full with a higher k-th score.
 */
export async function insertChunk(
  source: MemoKnnSource,
  chunk: readonly SparseDoc[],
  options: InsertChunkOptions,
): Promise<InsertedChunk> {
  const { k, pool, df, search } = options;
  const among = chunk.map((): SemanticNeighbour[] => []);
  for (let i = 0; i < chunk.length; i++) {
    for (let j = i + 1; j < chunk.length; j++) {
      const score = pairScore(chunk[i]!, chunk[j]!);
      if (!(score > 0)) continue;
      among[i]!.push({ memoryId: chunk[j]!.memoryId, score });
      among[j]!.push({ memoryId: chunk[i]!.memoryId, score });
    }
  }
  const put: SemanticDoc[] = [];
  const lists = new Map<string, SemanticNeighbour[]>();
  const enter = (owner: string, list: readonly SemanticNeighbour[], id: string, score: number) => {
    if (entersList(list, k, id, score)) lists.set(owner, insertIntoList(list, k, id, score));
  };
  for (const [at, doc] of chunk.entries()) {
    const nearest = await exactTopK(source, doc, pool, df, [], search);
    const neighbours = [...nearest, ...among[at]!].sort(compareNeighbours).slice(0, k);
    put.push({ ...doc, neighbours });
    // Scores are symmetric: the forward search already scored its pool.
    const scores = new Map(nearest.map((n) => [n.memoryId, n.score]));
    const candidates = options.reverse ? await options.reverse(doc) : [...scores.keys()];
    // Each candidate's list is distinct, so the order they are entered in does not matter.
    const unread: Array<{ id: string; score: number }> = [];
    for (const [id, vector] of await source.vectors(candidates)) {
      const score = scores.get(id) ?? pairScore(doc, vector);
      const list = lists.get(id);
      if (list) enter(id, list, doc.memoryId, score);
      else if (score > 0 && !(score < (source.entryBound(id) ?? 0))) unread.push({ id, score });
    }
    const stored = await source.lists(unread.map((entry) => entry.id));
    for (const { id, score } of unread) enter(id, stored.get(id)!, doc.memoryId, score);
  }
  return { put, lists: [...lists].map(([memoryId, neighbours]) => ({ memoryId, neighbours })) };
}
