import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import { APPROXIMATE_VECTOR_THRESHOLD } from '../../store/vector-index.ts';
import { denseMutualKnn } from '../semantic/dense-mutual-knn.ts';
import { rankableScore } from '../semantic/top-k-lists.ts';
import { DEFAULT_K, mutualEdges } from './compact-semantic.ts';
import { compareNeighbours, entersList, insertIntoList } from './exact-top-k-search.ts';
import { syncSemanticEdges } from './update-semantic-knn.ts';

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

export interface DenseUpdateResult {
  mode: 'incremental' | 'compacted';
  listsChanged: number;
  edgeChanges: number;
  /** True when the record space is above the store's exact-search size: searches are then approximate. */
  approximate: boolean;
}

/** The store vector space holding one record vector per memory of dense space `space`. */
export function recordSpace(space: string): string {
  return `${space}#record`;
}

/**
 * The dense-embedding counterpart of updateSemanticKnn: the same list maintenance (refill the lists of
 * leavers, add newcomers one at a time into their own exact top-k and into every list they beat, then sync
 * the edges of the touched memories), with cosine search through `store.searchVectors` over the record
 * vectors (space `recordSpace(space)`). The searches, and so the lists, are exact while the record space
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
  options: { k?: number } = {},
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
  const size = (await store.getVectors(contextId, vectors)).length;
  let listsChanged = 0;

  if (leaving.length > 0) {
    const owners = (await index.referrers(contextId, leaving)).filter((id) => !leaving.includes(id));
    await index.writeDocs(contextId, { remove: leaving });
    const lists: Array<{ memoryId: string; neighbours: SemanticNeighbour[] }> = [];
    for (const owner of await store.getVectors(contextId, vectors, owners)) {
      lists.push({
        memoryId: owner.memoryId,
        neighbours: await denseTopK(store, contextId, vectors, owner, k, size),
      });
      touched.add(owner.memoryId);
    }
    if (lists.length > 0) await index.writeDocs(contextId, { lists });
    listsChanged += lists.length;
  }

  for (const upsert of delta.upserted) {
    const neighbours = await denseTopK(store, contextId, vectors, upsert, k, size);
    // Reverse: every memory whose entry bound this newcomer's cosine reaches (hits come best first).
    const bounds = await index.thresholds(contextId);
    const lowest = Math.min(...bounds.values());
    const candidates = new Map<string, number>();
    for (const hit of await store.searchVectors(contextId, vectors, upsert.vector, { limit: size })) {
      const score = rankableScore(hit.rawScore);
      if (score < lowest) break;
      if (
        hit.memoryId !== upsert.memoryId &&
        score >= (bounds.get(hit.memoryId) ?? Number.POSITIVE_INFINITY)
      ) {
        candidates.set(hit.memoryId, score);
      }
    }
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
  return { mode: 'incremental', listsChanged, edgeChanges, approximate: size > APPROXIMATE_VECTOR_THRESHOLD };
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

/** Exact (below the store's threshold) top-k of one record vector, itself excluded; ties by memory id. */
async function denseTopK(
  store: ArchiveStore,
  contextId: string,
  vectors: string,
  query: DenseRecordVector,
  k: number,
  size: number,
): Promise<SemanticNeighbour[]> {
  // A margin past k so that rounding to 1e-9 and the id tie-break can reorder the boundary.
  const hits = await store.searchVectors(contextId, vectors, query.vector, {
    limit: Math.min(size, 2 * k + 1),
  });
  return hits
    .filter((hit) => hit.memoryId !== query.memoryId)
    .map((hit) => ({ memoryId: hit.memoryId, score: rankableScore(hit.rawScore) }))
    .filter((n) => n.score > 0)
    .sort(compareNeighbours)
    .slice(0, k);
}

function row(vector: DenseRecordVector) {
  return { memoryId: vector.memoryId, kind: 'text' as const, key: 'record', vector: vector.vector };
}
