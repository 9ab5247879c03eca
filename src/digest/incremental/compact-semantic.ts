import { GraphmemixError } from '../../errors/graphmemix-error.ts';
import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { SemanticDoc, SemanticNeighbour } from '../../store/semantic-index-spec.ts';
import { compareStrings } from '../../store/store-rules.ts';
import type { MemoryRecord } from '../../types/memory-record.ts';
import type { MemoryEdge } from '../../types/relation.ts';
import { buildTfidfSpace } from '../semantic/tfidf-space.ts';
import { exactTopK } from './exact-top-k-search.ts';
import { ScratchKnnSource } from './scratch-knn-source.ts';

export interface CompactionResult {
  documents: number;
  terms: number;
  /** Mutual pairs now carrying semantic_knn. */
  edges: number;
  seconds: number;
}

/** Records per listMemories page. */
const PAGE = 5000;

/**
 * Compaction: a new IDF snapshot from every current record, every vector and list rebuilt, and the context's
 * semantic_knn edges replaced (schema types untouched) with the mutual pairs. The result is exactly the full
 * exact rebuild: TfidfSpace over the records in id order and the mutual kNN with no candidate cap
 * (sparseMutualKnn with maxPostings = Infinity; ties by memory id). The searches run in memory
 * (ScratchKnnSource), then the state is written with one replaceAll and one replaceEdges.
 */
export async function compactSemantic(
  store: ArchiveStore,
  contextId: string,
  options: { k?: number } = {},
): Promise<CompactionResult> {
  const started = performance.now();
  const k = options.k ?? (await store.semantic.getSnapshot(contextId))?.k ?? 8;
  if (!Number.isInteger(k) || k < 1 || k > 1000) {
    throw new GraphmemixError('INVALID_INPUT', `k must be an integer in 1..1000, got ${k}`, {
      location: { field: 'k' },
    });
  }
  const records = (await loadRecords(store, contextId)).sort((x, y) => compareStrings(x.id, y.id));
  const space = buildTfidfSpace(records);
  const source = new ScratchKnnSource(space);
  const lists: SemanticNeighbour[][] = [];
  for (let d = 0; d < space.size; d++) {
    lists.push(await exactTopK(source, source.doc(d), k, source.df));
  }
  const docs: SemanticDoc[] = lists.map((neighbours, d) => ({ ...source.doc(d), neighbours }));
  const edges = mutualEdges(contextId, docs);
  await store.semantic.replaceAll(
    contextId,
    { documents: space.size, k, createdAt: new Date().toISOString(), df: source.df },
    docs,
  );
  await store.replaceEdges(contextId, ['semantic_knn'], edges);
  return {
    documents: space.size,
    terms: source.df.size,
    edges: edges.length,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Mutual pairs of the lists as semantic_knn edges (strength = similarity = mean of both scores). */
export function mutualEdges(contextId: string, docs: readonly SemanticDoc[]): MemoryEdge[] {
  const byId = new Map(docs.map((doc) => [doc.memoryId, doc]));
  const edges: MemoryEdge[] = [];
  for (const doc of docs) {
    for (const n of doc.neighbours) {
      if (!(doc.memoryId < n.memoryId)) continue;
      const back = byId.get(n.memoryId)?.neighbours.find((m) => m.memoryId === doc.memoryId);
      if (!back) continue;
      const similarity = (n.score + back.score) / 2;
      edges.push({
        contextId,
        a: doc.memoryId,
        b: n.memoryId,
        types: ['semantic_knn'],
        strength: similarity,
        similarity,
      });
    }
  }
  return edges;
}

async function loadRecords(store: ArchiveStore, contextId: string): Promise<MemoryRecord[]> {
  const records: MemoryRecord[] = [];
  let last: MemoryRecord | undefined;
  for (;;) {
    const page = await store.listMemories(
      contextId,
      last === undefined ? { limit: PAGE } : { afterSequence: last.sequence, afterId: last.id, limit: PAGE },
    );
    records.push(...page);
    if (page.length < PAGE) return records;
    last = page[page.length - 1]!;
  }
}
