import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { ArchiveStore, EdgeChange } from '../../store/archive-store-spec.ts';
import { pairKey } from '../../store/edge-merge.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import { SEMANTIC_TOP_SIZE } from '../../store/sqlite-semantic-top.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { MemoryEdge } from '../../types/relation.ts';
import { semanticText } from '../semantic/semantic-text.ts';
import { compactSemantic } from './compact-semantic.ts';
import { exactTopK, reverseCandidates } from './exact-top-k-search.ts';
import { distinctTerms, frozenVector, type SparseDoc, sameVector } from './frozen-tfidf.ts';
import { insertChunk } from './insert-chunk.ts';
import { memoKnnSource } from './memo-knn-source.ts';
import { compactionLimit, semanticNeedsCompaction } from './semantic-needs-compaction.ts';
import { storeKnnSource } from './store-knn-source.ts';

/** Upserts up to which the update asks for each id's referrers before it knows whether the id is stored. */
const SPECULATIVE_REFERRERS = 8;

/** What changed in a context since the last semantic update (records already written / deleted). */
export interface SemanticDelta {
  upserted: ReadonlyArray<{ before?: MemoryRecord; after: MemoryRecord }>;
  removed: readonly MemoryRecord[];
}

export interface SemanticUpdateOptions {
  /** Compaction rule (semanticNeedsCompaction); the defaults when absent. */
  rule?: { ratio?: number; minChanges?: number };
  /** Compact instead when the delta alone reaches the rule's limit. Default true. */
  compactBulk?: boolean;
  /**
   * The share of the snapshot a delta must reach to be compacted instead (with compactBulk; default: the
   * rule's ratio). A caller that compacts in the background passes BULK_RATIO_WITH_STEPS.
   */
  bulkRatio?: number;
  /**
   * How a newcomer finds the lists it enters (docs/semantic-knn.md, "Reverse search"):
   * - 'neighbourhood' (default): the lists of its REVERSE_POOL nearest memories (its own exact top-pool,
   *   one forward search). Every pair that can become a mutual edge is among them (a mutual partner is in
   *   the newcomer's own top-k), so new edges are exact; a far memory with a weak k-th neighbour may keep
   *   an entry the newcomer should have pushed out until the next compaction. Cost independent of N.
   * - 'exact': every list it enters, through the ratio index (reads grow with the context).
   */
  reverse?: 'neighbourhood' | 'exact';
  /**
   * Forward searches read at most this many postings of a term (its heaviest) when the term is in more
   * documents than that at the snapshot (TopKSearchOptions.maxPostingsPerTerm): the cost of a search stops
   * growing with the context. Default MAX_POSTINGS_PER_TERM; Infinity = exact. 'exact' reverse implies
   * exact forward searches too.
   */
  maxPostingsPerTerm?: number;
  /** A compaction run here is compactSemantic 'auto' with this size threshold (APPROXIMATE_KNN_FROM). */
  approximateFrom?: number;
}

/**
 * Default posting limit per term of the incremental forward searches: common terms (function words, a
 * person's everyday vocabulary) are read only through their heaviest postings, as in impact-ordered
 * early termination. Agreement with the exact search measured by bench:knn (docs/semantic-knn.md). The
 * size of the SQLite index's kept top lists (one row per such term), so these reads are one row each there.
 */
export const MAX_POSTINGS_PER_TERM = SEMANTIC_TOP_SIZE;

/**
 * Newcomers searched against one cached view of the index and written in one writeDocs: large enough that a
 * chunk shares its reads of common terms, small enough that the in-memory pairs among the chunk (n^2 / 2
 * sparse dot products) stay negligible.
 */
export const INSERT_CHUNK = 256;

/**
 * Terms in at most this many documents at the snapshot have their whole posting list read by a chunk's
 * first window on them (memoKnnSource `wholeList`): at 100k (one add-100, 50 add-1) the first window of
 * every such term read its whole list anyway, and the ~5 deeper windows per newcomer found nothing.
 * Longer lists are the truncated ones (MAX_POSTINGS_PER_TERM) or, in exact mode, read by windows.
 */
export const WHOLE_LIST_DF = 1024;

/** Lists checked per newcomer in 'neighbourhood' mode: its nearest max(k, REVERSE_POOL_FACTOR * k). */
export const REVERSE_POOL_FACTOR = 4;

export interface SemanticUpdateResult {
  /**
   * 'compacted' when the context had no tfidf snapshot (the first update builds it from every record) or the
   * delta alone reached the compaction limit (compactionLimit).
   */
  mode: 'incremental' | 'compacted';
  added: number;
  /** Upserts whose vector changed (removed, then added again). */
  changed: number;
  /** Upserts whose semantic text (so vector) did not change: nothing to do. */
  unchanged: number;
  removed: number;
  /** Lists of other memories rewritten (entered by a newcomer, or refilled after a removal). */
  listsChanged: number;
  /** Pair changes handed to store.changeEdges. */
  edgeChanges: number;
  /** The compaction rule after this update (see semanticNeedsCompaction). */
  needsCompaction: boolean;
}

/**
 * Keeps the mutual-kNN (semantic_knn) edges of one context exact under its FROZEN snapshot, touching only
 * the neighbourhood of what changed (docs/semantic-knn.md):
 * 1. removed memories, and upserts whose vector changed, leave the index; every list that named them is
 *    refilled by an exact search;
 * 2. new (or changed) memories, in chunks of INSERT_CHUNK (insertChunk), get their exact top-k over the
 *    stored memories and the chunk, and enter the lists of the memories whose k-th entry they beat (among
 *    their nearest REVERSE_POOL_FACTOR * k by default, every such list with `reverse: 'exact'`);
 * 3. mutual edges are recomputed only for memories whose list changed and written with changeEdges
 *    (adding/removing semantic_knn only; schema types are never touched).
 * With `reverse: 'exact'` the lists afterwards equal an exact kNN over the current memories under the
 * snapshot's IDF; by default a newcomer's own list and mutual edges are exact (docs/semantic-knn.md).
 */
export async function updateSemanticKnn(
  store: ArchiveStore,
  contextId: string,
  delta: SemanticDelta,
  options: SemanticUpdateOptions = {},
): Promise<SemanticUpdateResult> {
  for (const record of [...delta.upserted.map((u) => u.after), ...delta.removed]) {
    if (record.contextId !== contextId) {
      throw new GraphmemixError('INVALID_INPUT', `record "${record.id}" is not in context "${contextId}"`, {
        location: { recordId: record.id, field: 'contextId' },
      });
    }
  }
  const index = store.semantic;
  const snapshot = await index.getSnapshot(contextId);
  const result: SemanticUpdateResult = {
    mode: 'incremental',
    added: 0,
    changed: 0,
    unchanged: 0,
    removed: 0,
    listsChanged: 0,
    edgeChanges: 0,
    needsCompaction: false,
  };
  // No snapshot (or another space), or a delta that alone reaches the compaction limit (a bulk import):
  // one compaction is cheaper than that many incremental adds, and it refreshes the IDF.
  const size = delta.upserted.length + delta.removed.length;
  const bulk = options.compactBulk ?? true;
  const bulkRule =
    options.bulkRatio === undefined ? options.rule : { ...options.rule, ratio: options.bulkRatio };
  if (snapshot?.space !== 'tfidf' || (bulk && size >= compactionLimit(snapshot.documents, bulkRule))) {
    const compaction = await compactSemantic(store, contextId, {
      method: 'auto',
      ...(options.approximateFrom === undefined ? {} : { approximateFrom: options.approximateFrom }),
    });
    return { ...result, mode: 'compacted', added: compaction.documents, edgeChanges: compaction.edges };
  }
  const k = snapshot.k;
  const source = storeKnnSource(index, contextId);

  // Vectors under the frozen snapshot (the last upsert of an id wins).
  const latest = new Map<string, MemoryRecord>();
  for (const { after } of delta.upserted) latest.set(after.id, after);
  const texts = new Map([...latest].map(([id, record]) => [id, semanticText(record)]));
  const removedIds = [...new Set(delta.removed.map((record) => record.id))].filter((id) => !latest.has(id));
  // Independent reads, issued together (a networked store answers them in one round trip). A small delta
  // (an add) also asks up front whether lists name each upserted id, which matters for the ids not stored.
  const speculate = latest.size <= SPECULATIVE_REFERRERS;
  const [df, storedDocs, named] = await Promise.all([
    index.documentFrequencies(contextId, [...new Set([...texts.values()].flatMap(distinctTerms))]),
    index.getDocs(contextId, [...latest.keys(), ...removedIds]),
    speculate
      ? Promise.all(
          [...latest.keys()].map(async (id) => [id, await index.referrers(contextId, [id])] as const),
        )
      : undefined,
  ]);
  const referred = new Map(named);
  const incoming = [...latest.keys()].map((id) => frozenVector(id, texts.get(id)!, snapshot.documents, df));
  const stored = new Map(storedDocs.map((doc) => [doc.memoryId, doc]));

  const toAdd: SparseDoc[] = [];
  // Deleting a memory already dropped its own document; the lists naming it still need refilling.
  const leaving: string[] = [...removedIds];
  result.removed = removedIds.length;
  for (const doc of incoming) {
    const before = stored.get(doc.memoryId);
    if (before && sameVector(before, doc)) {
      result.unchanged++;
      continue;
    }
    if (before) {
      leaving.push(doc.memoryId);
      result.changed++;
    } else result.added++;
    toAdd.push(doc);
  }
  // A newcomer that lists still name (an update interrupted after its removal) is refilled like a leaver,
  // so no stale score of it survives.
  const fresh = toAdd.filter((doc) => !stored.has(doc.memoryId));
  const owners = await Promise.all(
    fresh.map((doc) => referred.get(doc.memoryId) ?? index.referrers(contextId, [doc.memoryId])),
  );
  fresh.forEach((doc, at) => {
    if (owners[at]!.length > 0) leaving.push(doc.memoryId);
  });
  const touched = new Set<string>([...removedIds, ...toAdd.map((doc) => doc.memoryId)]);

  const exactReverse = options.reverse === 'exact';
  const pool = exactReverse ? k : Math.max(k, REVERSE_POOL_FACTOR * k);
  const search = {
    maxPostingsPerTerm: exactReverse
      ? Number.POSITIVE_INFINITY
      : (options.maxPostingsPerTerm ?? MAX_POSTINGS_PER_TERM),
  };

  // One read cache over the index as it stands (a chunk's searches, or one removal's refills, share it).
  const cachedSource = (frequencies: ReadonlyMap<string, number>) =>
    memoKnnSource({
      termBounds: source.termBounds,
      postings: source.postings,
      topPostings: source.topPostings,
      getDocs: (ids) => index.getDocs(contextId, ids),
      getVectors: index.getVectors && ((ids) => index.getVectors!(contextId, ids)),
      // Lists short at the snapshot (not truncated; the searches read their first window to the end anyway).
      wholeList: (term) => (frequencies.get(term) ?? 0) <= WHOLE_LIST_DF,
    });

  // 1. Leave, then refill the lists that named a leaver (after ALL leave, so no refill picks a leaver).
  const refilled = new Set<string>();
  if (leaving.length > 0) {
    const owners = (await index.referrers(contextId, leaving)).filter((id) => !leaving.includes(id));
    await index.writeDocs(contextId, { remove: leaving });
    const ownerDocs = await index.getDocs(contextId, owners);
    const ownerDf = await index.documentFrequencies(contextId, [
      ...new Set(ownerDocs.flatMap((doc) => doc.terms)),
    ]);
    // The owners were neighbours of the same leaver, so their searches share most reads (common terms'
    // heaviest postings, the same neighbourhood's vectors): one cache serves them all, as for a chunk of
    // newcomers below. The index does not change until their lists are written.
    const refillSource = cachedSource(ownerDf);
    const lists: Array<{ memoryId: string; neighbours: SemanticNeighbour[] }> = [];
    for (const doc of ownerDocs) {
      const seeds = doc.neighbours.map((n) => n.memoryId).filter((id) => !leaving.includes(id));
      lists.push({
        memoryId: doc.memoryId,
        neighbours: await exactTopK(refillSource, doc, k, ownerDf, seeds, search),
      });
      touched.add(doc.memoryId);
      refilled.add(doc.memoryId);
    }
    if (lists.length > 0) await index.writeDocs(contextId, { lists });
    result.listsChanged += lists.length;
  }

  // 2. Add in chunks: each newcomer's pool is searched in the index as it stands before the chunk (one
  //    cache of term bounds, postings and documents serves the whole chunk) and among the chunk's other
  //    newcomers in memory; the lists it enters are updated in memory; one writeDocs per chunk.
  const known = new Map<string, SemanticDoc>();
  let storedEdges: Promise<MemoryEdge[]> | undefined;
  for (let at = 0; at < toAdd.length; at += INSERT_CHUNK) {
    const chunk = toAdd.slice(at, at + INSERT_CHUNK);
    const cached = cachedSource(df);
    const inserted = await insertChunk(cached, chunk, {
      k,
      pool,
      df,
      search,
      reverse: exactReverse ? (doc) => reverseCandidates(cached, doc, df) : undefined,
    });
    result.listsChanged += inserted.lists.length;
    for (const doc of inserted.put) known.set(doc.memoryId, doc);
    // The edge sync reads only lists.
    for (const { memoryId, neighbours } of inserted.lists) {
      touched.add(memoryId);
      known.set(memoryId, { memoryId, terms: [], weights: [], neighbours });
    }
    const writing = index.writeDocs(contextId, { put: inserted.put, lists: inserted.lists });
    if (at + INSERT_CHUNK >= toAdd.length) {
      // The last write and the stored edges the sync reads read nothing of each other (semantic rows vs
      // edges): issued together, one round trip where the store pipelines them.
      storedEdges = store.neighbors(contextId, [...touched]);
      storedEdges.catch(() => {}); // a failing write fails the update first
    }
    await writing;
  }

  result.edgeChanges = await syncSemanticEdges(store, contextId, [...touched], known, refilled, storedEdges);
  result.needsCompaction = (await semanticNeedsCompaction(store, contextId, options.rule)).needed;
  return result;
}

/**
 * Makes the semantic_knn edges touching `ids` match the stored lists (mutual pairs, similarity = mean of the
 * two directed scores). Pairs between two untouched memories keep their lists, so their edges stay right.
 */
export async function syncSemanticEdges(
  store: ArchiveStore,
  contextId: string,
  ids: readonly string[],
  known: ReadonlyMap<string, SemanticDoc> = new Map(),
  /**
   * When given: the touched lists that may have gained an entry outside `ids` (refilled after a removal).
   * Every other touched list gained only touched entries, so an untouched memory n it names was named
   * before, n's list did not change, and the pair is mutual now exactly when it was: when its stored
   * semantic_knn edge exists. Then n's list is not read (most of the lists an add read). Absent: every
   * list a touched one names is read.
   */
  refilled?: ReadonlySet<string>,
  /** The stored edges touching `ids`, when the caller has read them already (after the lists changed). */
  storedEdges?: Promise<MemoryEdge[]>,
): Promise<number> {
  if (ids.length === 0) return 0;
  const touched = new Set(ids);
  // `known`: documents the caller has just written (their stored state), not read again.
  const lists = new Map<string, SemanticDoc>();
  for (const id of ids) {
    const doc = known.get(id);
    if (doc) lists.set(id, doc);
  }
  // Only lists are needed here: read without vectors where the backend can.
  const readLists = async (wanted: readonly string[]) => {
    if (wanted.length === 0) return;
    if (store.semantic.getLists) {
      for (const [memoryId, neighbours] of await store.semantic.getLists(contextId, wanted)) {
        lists.set(memoryId, { memoryId, terms: [], weights: [], neighbours });
      }
    } else for (const doc of await store.semantic.getDocs(contextId, wanted)) lists.set(doc.memoryId, doc);
  };
  // The stored edges do not depend on the lists: read together with the first lists.
  const [, edges] = await Promise.all([
    readLists(ids.filter((id) => !lists.has(id))),
    storedEdges ?? store.neighbors(contextId, ids),
  ]);
  const missing = new Set<string>();
  for (const doc of lists.values()) {
    if (refilled && !refilled.has(doc.memoryId)) continue;
    for (const n of doc.neighbours) if (!lists.has(n.memoryId)) missing.add(n.memoryId);
  }
  await readLists([...missing]);

  const stored = edges.filter((edge) => edge.types.includes('semantic_knn'));
  const storedKeys = new Set(stored.map((edge) => pairKey(edge.a, edge.b)));
  const wanted = new Map<string, { a: string; b: string; similarity: number }>();
  // Pairs with an untouched memory decided by their stored edge (see `refilled`): left as they are.
  const kept = new Set<string>();
  for (const id of ids) {
    for (const n of lists.get(id)?.neighbours ?? []) {
      const [a, b] = id < n.memoryId ? [id, n.memoryId] : [n.memoryId, id];
      const key = pairKey(a, b);
      if (refilled && !touched.has(n.memoryId) && !refilled.has(id)) {
        if (storedKeys.has(key)) kept.add(key);
        continue;
      }
      const back = lists.get(n.memoryId)?.neighbours.find((m) => m.memoryId === id);
      if (!back) continue;
      wanted.set(key, { a, b, similarity: (n.score + back.score) / 2 });
    }
  }
  const changes: EdgeChange[] = [];
  for (const edge of stored) {
    const key = pairKey(edge.a, edge.b);
    if (kept.has(key) && !wanted.has(key)) continue;
    const want = wanted.get(key);
    wanted.delete(key);
    if (!want) changes.push({ a: edge.a, b: edge.b, remove: ['semantic_knn'] });
    else if (want.similarity !== edge.similarity) {
      changes.push({ a: edge.a, b: edge.b, add: ['semantic_knn'], similarity: want.similarity });
    }
  }
  for (const want of wanted.values()) {
    changes.push({ a: want.a, b: want.b, add: ['semantic_knn'], similarity: want.similarity });
  }
  await store.changeEdges(contextId, changes);
  return changes.length;
}
