import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import { APPROXIMATE_VECTOR_THRESHOLD } from '../../store/vector-index.ts';
import { denseMutualKnn } from '../semantic/dense-mutual-knn.ts';
import { rankableScore } from '../semantic/top-k-lists.ts';
import { DEFAULT_K, mutualEdges } from './compact-semantic.ts';
import { compareNeighbours, entersList, insertIntoList } from './exact-top-k-search.ts';
import { REVERSE_POOL_FACTOR, syncSemanticEdges } from './update-semantic-knn.ts';

/** One record vector of a dense space (the normalised mean of its view vectors, see embedViews). */
export interface DenseRecordVector {
  memoryId: string;
  vector: Float32Array;
}

export interface DenseDelta {
  /** Records added or re-embedded, with their record vectors. */
  upserted: readonly DenseRecordVector[];
  /** Ids of deleted records (already deleted from the store). */
  removed: readonly string[];
}

export interface DenseUpdateOptions {
  /** The lists' k when this call builds them (no snapshot in this space yet); afterwards the snapshot's. */
  k?: number;
  /**
   * How a newcomer finds the lists it enters, as in updateSemanticKnn:
   * - 'neighbourhood' (default): the lists of its REVERSE_POOL_FACTOR * k nearest memories, found by the same
   *   search as its own list. Every pair that can become a mutual edge is among them (a mutual partner is in
   *   the newcomer's own top-k), so its list and new edges are exact; a farther memory whose k-th entry it
   *   beats keeps that entry until the next compaction. Work per add does not grow with the context.
   * - 'exact': every list it enters (reads every list's entry bound and ranks the whole space: the reference
   *   the tests compare with, linear in the context).
   */
  reverse?: 'neighbourhood' | 'exact';
}

export interface DenseUpdateResult {
  mode: 'incremental' | 'compacted';
  listsChanged: number;
  edgeChanges: number;
  /** True when the context is above the store's exact-search size (its searches may then be approximate). */
  approximate: boolean;
}

/** The store vector space holding one record vector per memory of dense space `space`. */
export function recordSpace(space: string): string {
  return `${space}#record`;
}

/**
 * The dense-embedding counterpart of updateSemanticKnn: the same list maintenance (refill the lists of
 * leavers, add newcomers one at a time into their own exact top-k and into the lists they beat among their
 * nearest, `reverse` below, then sync the edges of the touched memories), with cosine search through
 * `store.searchVectors` over the record vectors (space `recordSpace(space)`): a few searches of bounded size
 * per newcomer, nothing read in proportion to the context. The searches, and so the lists, are exact while the record space
 * holds at most APPROXIMATE_VECTOR_THRESHOLD vectors (the store's exact scan); above it the store's IVF
 * index answers and results are approximate (`approximate: true`). The lists live in `store.semantic` with
 * snapshot space = `space` and no terms; a context whose snapshot is another space is compacted first
 * (from the record vectors stored so far plus this delta's: the first call should carry every record's).
 */
export async function updateDenseKnn(
  store: ArchiveStore,
  contextId: string,
  space: string,
  delta: DenseDelta,
  options: DenseUpdateOptions = {},
): Promise<DenseUpdateResult> {
  const vectors = recordSpace(space);
  const snapshot = await store.semantic.getSnapshot(contextId);
  if (snapshot?.space !== space) {
    if (delta.upserted.length > 0) await store.putVectors(contextId, vectors, delta.upserted.map(row));
    // `k` applies when this builds the lists (no snapshot in this space yet); afterwards the snapshot's k.
    const compaction = await compactDense(store, contextId, space, options);
    return { mode: 'compacted', listsChanged: 0, edgeChanges: compaction.edges, approximate: false };
  }
  const k = snapshot.k;
  const index = store.semantic;
  const exact = options.reverse === 'exact';
  const removed = new Set(delta.removed);
  const stored = new Set(
    (
      await index.getDocs(
        contextId,
        delta.upserted.map((u) => u.memoryId),
      )
    ).map((d) => d.memoryId),
  );
  // Re-embedded records leave and come back; their old vectors were dropped by the store with the update.
  const leaving = [
    ...removed,
    ...delta.upserted.filter((u) => stored.has(u.memoryId)).map((u) => u.memoryId),
  ];
  for (const u of delta.upserted) {
    if (!stored.has(u.memoryId) && (await index.referrers(contextId, [u.memoryId])).length > 0)
      leaving.push(u.memoryId);
  }
  const touched = new Set<string>([...leaving, ...delta.upserted.map((u) => u.memoryId)]);
  // All new vectors go in first: refills and earlier newcomers then already see later ones, whose own add
  // finds them in those lists (insertIntoList replaces, never duplicates).
  if (delta.upserted.length > 0) await store.putVectors(contextId, vectors, delta.upserted.map(row));
  // The exact reverse search ranks the whole space (the reference mode: its cost grows with the context).
  const size = exact ? (await store.getVectors(contextId, vectors)).length : undefined;
  const pool = exact ? k : Math.max(k, REVERSE_POOL_FACTOR * k);
  let listsChanged = 0;

  if (leaving.length > 0) {
    const owners = (await index.referrers(contextId, leaving)).filter((id) => !leaving.includes(id));
    await index.writeDocs(contextId, { remove: leaving });
    const lists: Array<{ memoryId: string; neighbours: SemanticNeighbour[] }> = [];
    for (const owner of await store.getVectors(contextId, vectors, owners)) {
      const hits = await nearest(store, contextId, vectors, owner, searchLimit(k, k, size));
      lists.push({ memoryId: owner.memoryId, neighbours: hits.slice(0, k) });
      touched.add(owner.memoryId);
    }
    if (lists.length > 0) await index.writeDocs(contextId, { lists });
    listsChanged += lists.length;
  }

  for (const upsert of delta.upserted) {
    // One search gives the newcomer's own top-k and, by default, the pool whose lists it may enter.
    const hits = await nearest(store, contextId, vectors, upsert, searchLimit(k, pool, size));
    const neighbours = hits.slice(0, k);
    const candidates = exact
      ? await exactReverseCandidates(store, contextId, vectors, upsert, size!)
      : new Map(hits.slice(0, pool).map((hit) => [hit.memoryId, hit.score]));
    const lists: Array<{ memoryId: string; neighbours: SemanticNeighbour[] }> = [];
    for (const other of await index.getDocs(contextId, [...candidates.keys()])) {
      const score = candidates.get(other.memoryId)!;
      if (!entersList(other.neighbours, k, upsert.memoryId, score)) continue;
      lists.push({
        memoryId: other.memoryId,
        neighbours: insertIntoList(other.neighbours, k, upsert.memoryId, score),
      });
      touched.add(other.memoryId);
    }
    await index.writeDocs(contextId, {
      put: [{ memoryId: upsert.memoryId, terms: [], weights: [], neighbours }],
      lists,
    });
    listsChanged += lists.length;
  }
  const edgeChanges = await syncSemanticEdges(store, contextId, [...touched]);
  const memories = size ?? (await store.countMemories(contextId));
  return {
    mode: 'incremental',
    listsChanged,
    edgeChanges,
    approximate: memories > APPROXIMATE_VECTOR_THRESHOLD,
  };
}

/**
 * Hits asked of one search: the wanted count plus a margin past k (rounding to 1e-9 and the id tie-break can
 * reorder the boundary), never more than the space holds when that is known.
 */
function searchLimit(k: number, wanted: number, size: number | undefined): number {
  const limit = Math.max(wanted, k) + k + 1;
  return size === undefined ? limit : Math.min(size, limit);
}

/** Every memory whose list's entry bound the newcomer's cosine reaches (reads every bound and ranks the space). */
async function exactReverseCandidates(
  store: ArchiveStore,
  contextId: string,
  vectors: string,
  upsert: DenseRecordVector,
  size: number,
): Promise<Map<string, number>> {
  const bounds = await store.semantic.thresholds(contextId);
  const lowest = Math.min(...bounds.values());
  const candidates = new Map<string, number>();
  // Hits come best first: past the lowest bound nobody else can be entered.
  for (const hit of await store.searchVectors(contextId, vectors, upsert.vector, { limit: size })) {
    const score = rankableScore(hit.rawScore);
    if (score < lowest) break;
    if (hit.memoryId !== upsert.memoryId && score >= (bounds.get(hit.memoryId) ?? Number.POSITIVE_INFINITY)) {
      candidates.set(hit.memoryId, score);
    }
  }
  return candidates;
}

/**
 * Rebuilds the dense lists and semantic_knn edges of a context from its stored record vectors with
 * denseMutualKnn (exact up to its exactLimit, seeded LSH above), and makes `space` the context's snapshot.
 */
export async function compactDense(
  store: ArchiveStore,
  contextId: string,
  space: string,
  options: { k?: number } = {},
): Promise<{ documents: number; edges: number }> {
  const k = options.k ?? (await store.semantic.getSnapshot(contextId))?.k ?? DEFAULT_K;
  const rows = await store.getVectors(contextId, recordSpace(space));
  const result = denseMutualKnn(
    rows.map((r) => r.vector),
    { k },
  );
  const docs: SemanticDoc[] = rows.map((r, i) => ({
    memoryId: r.memoryId,
    terms: [],
    weights: [],
    neighbours: result.lists
      .neighbours(i)
      .map(({ index, score }) => ({ memoryId: rows[index]!.memoryId, score }))
      .sort(compareNeighbours),
  }));
  const edges = mutualEdges(contextId, docs);
  await store.semantic.replaceAll(
    contextId,
    { space, documents: rows.length, k, createdAt: new Date().toISOString(), df: new Map() },
    docs,
  );
  await store.replaceEdges(contextId, ['semantic_knn'], edges);
  return { documents: rows.length, edges: edges.length };
}

/**
 * The nearest record vectors of one (itself excluded, cosine > 0), best first, ties by memory id: exact while
 * the store's search is (at most APPROXIMATE_VECTOR_THRESHOLD vectors, or an index that re-scores exactly).
 */
async function nearest(
  store: ArchiveStore,
  contextId: string,
  vectors: string,
  query: DenseRecordVector,
  limit: number,
): Promise<SemanticNeighbour[]> {
  const hits = await store.searchVectors(contextId, vectors, query.vector, { limit });
  return hits
    .filter((hit) => hit.memoryId !== query.memoryId)
    .map((hit) => ({ memoryId: hit.memoryId, score: rankableScore(hit.rawScore) }))
    .filter((n) => n.score > 0)
    .sort(compareNeighbours);
}

function row(vector: DenseRecordVector) {
  return { memoryId: vector.memoryId, kind: 'text' as const, key: 'record', vector: vector.vector };
}
