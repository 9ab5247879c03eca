import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { EmbeddingModel } from '../providers/model-spec.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import { countEdgeTypes } from '../store/edge-merge.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { RELATION_TYPES, type RelationType, type SchemaRelationType } from '../types/relation.ts';
import { embedViews } from './embed-views.ts';
import { consecutiveTurnPairs } from './relations/consecutive-turn.ts';
import { eventBridgePairs } from './relations/event-bridge.ts';
import { mergeRelationEdges, type SemanticPair } from './relations/merge-relation-edges.ts';
import { recordGroundingPairs } from './relations/record-grounding.ts';
import type { RecordPair } from './relations/record-pair.ts';
import { sameRecordPairs } from './relations/same-record.ts';
import { sameRoundPairs } from './relations/same-round.ts';
import { denseMutualKnn } from './semantic/dense-mutual-knn.ts';
import { sparseMutualKnn } from './semantic/sparse-mutual-knn.ts';
import { buildTfidfSpace } from './semantic/tfidf-space.ts';

export interface BuildRelationsOptions {
  /** Dense embeddings for semantic_knn; without one (or when it fails) the offline tfidf space is used. */
  embedding?: EmbeddingModel;
  /** Mutual-kNN k (method notes: 8). */
  k?: number;
  /** TF-IDF candidate cap (see sparseMutualKnn); the default suits 100k-record contexts. */
  maxPostings?: number;
}

export interface BuildRelationsResult {
  /** Pairs that carry each relation type after the rebuild. */
  counts: Record<RelationType, number>;
  /** Seconds per step: load, one per relation type, semantic (incl. embeddings), write, total. */
  seconds: Record<string, number>;
  /** The space semantic_knn was computed in: 'tfidf' or `embedding:${modelId}`. */
  semanticSpace: string;
  /** Non-fatal notes (an embedding model that failed and was replaced by tfidf). */
  warnings: string[];
}

/** Records per listMemories page. */
const PAGE = 5000;

const SCHEMA_RELATIONS: ReadonlyArray<
  [SchemaRelationType, (records: readonly MemoryRecord[]) => RecordPair[]]
> = [
  ['same_round', sameRoundPairs],
  ['consecutive_turn', consecutiveTurnPairs],
  ['event_bridge', eventBridgePairs],
  ['same_record', sameRecordPairs],
  ['record_grounding', recordGroundingPairs],
];

/**
 * Recomputes every relation of one context from its stored records and replaces all its edges with ONE
 * `replaceEdges` call (all relation types), so a rebuild is all-or-nothing per context. Relations are
 * per context: nothing crosses contexts. Called by ingest for every touched context.
 */
export async function buildRelations(
  store: ArchiveStore,
  contextId: string,
  options: BuildRelationsOptions = {},
): Promise<BuildRelationsResult> {
  const k = options.k ?? 8;
  if (!Number.isInteger(k) || k < 1 || k > 1000) {
    throw new GraphmemixError('INVALID_INPUT', `k must be an integer in 1..1000, got ${k}`, {
      location: { field: 'k' },
    });
  }
  const seconds: Record<string, number> = {};
  const warnings: string[] = [];
  const started = performance.now();
  let clock = started;
  const lap = (step: string): void => {
    const now = performance.now();
    seconds[step] = (now - clock) / 1000;
    clock = now;
  };

  const records = await loadRecords(store, contextId);
  lap('load');

  const schema: Partial<Record<SchemaRelationType, RecordPair[]>> = {};
  for (const [type, compute] of SCHEMA_RELATIONS) {
    schema[type] = compute(records);
    lap(type);
  }

  const { semanticSpace, semantic, warning } = await semanticPairs(store, contextId, records, options);
  if (warning) warnings.push(warning);
  lap('semantic_knn');

  const edges = mergeRelationEdges(contextId, schema, semantic);
  lap('merge');
  await store.replaceEdges(contextId, RELATION_TYPES, edges);
  lap('write');
  seconds.total = (performance.now() - started) / 1000;
  return { counts: countEdgeTypes(edges), seconds, semanticSpace, warnings };
}

export async function loadRecords(store: ArchiveStore, contextId: string): Promise<MemoryRecord[]> {
  const records: MemoryRecord[] = [];
  let last: MemoryRecord | undefined;
  for (;;) {
    // Keyset paging on (sequence, id): sources imported separately may reuse sequence numbers.
    const page = await store.listMemories(
      contextId,
      last === undefined ? { limit: PAGE } : { afterSequence: last.sequence, afterId: last.id, limit: PAGE },
    );
    records.push(...page);
    if (page.length < PAGE) return records;
    last = page[page.length - 1]!;
  }
}

/** Mutual-kNN pairs over all records: dense embeddings when configured and working, else offline TF-IDF. */
export async function semanticPairs(
  store: ArchiveStore,
  contextId: string,
  records: readonly MemoryRecord[],
  options: BuildRelationsOptions,
): Promise<{ semanticSpace: string; semantic: SemanticPair[]; warning?: string }> {
  const k = options.k ?? 8;
  let warning: string | undefined;
  let semanticSpace = 'tfidf';
  let semantic: SemanticPair[] | undefined;
  if (options.embedding) {
    const embedded = await embedViews(store, contextId, records, options.embedding);
    if (embedded.ok) {
      const ids = [...embedded.recordVectors.keys()];
      const result = denseMutualKnn([...embedded.recordVectors.values()], { k });
      semantic = result.pairs.map((pair) => ({
        a: ids[pair.a]!,
        b: ids[pair.b]!,
        similarity: pair.similarity,
      }));
      semanticSpace = embedded.space;
    } else {
      warning = embedded.warning;
    }
  }
  if (!semantic) {
    const space = buildTfidfSpace(records);
    const knnOptions = options.maxPostings === undefined ? { k } : { k, maxPostings: options.maxPostings };
    const result = sparseMutualKnn(space, knnOptions);
    semantic = result.pairs.map((pair) => ({
      a: space.ids[pair.a]!,
      b: space.ids[pair.b]!,
      similarity: pair.similarity,
    }));
  }
  return warning === undefined ? { semanticSpace, semantic } : { semanticSpace, semantic, warning };
}
