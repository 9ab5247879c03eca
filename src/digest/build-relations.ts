import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { EmbeddingModel } from '../providers/model-spec.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import {
  type MemoryEdge,
  type RelationType,
  SCHEMA_RELATION_TYPES,
  type SchemaRelationType,
} from '../types/relation.ts';
import { COLLECT_FROM, collectGarbage, collectGarbageIfGrown } from './collect-garbage.ts';
import { embedViews } from './embed-views.ts';
import { atOnce, type CompactionTurn, compactSemantic } from './incremental/compact-semantic.ts';
import type { CompactionScheduler } from './incremental/semantic-compaction-mark.ts';
import { compactDense, recordSpace } from './incremental/update-dense-knn.ts';
import { loadRecords } from './load-records.ts';
import { consecutiveTurnPairs } from './relations/consecutive-turn.ts';
import { eventBridgePairs } from './relations/event-bridge.ts';
import { RelationEdgeMerger } from './relations/merge-relation-edges.ts';
import { recordGroundingPairs } from './relations/record-grounding.ts';
import type { RecordPair } from './relations/record-pair.ts';
import { sameRecordPairs } from './relations/same-record.ts';
import { sameRoundPairs } from './relations/same-round.ts';
import { supersedesPairs } from './relations/supersedes.ts';
import { semanticText } from './semantic/semantic-text.ts';
import type { TfidfDocument } from './semantic/tfidf-space.ts';

export interface BuildRelationsOptions {
  /** Dense embeddings for semantic_knn; without one (or when it fails) the offline tfidf space is used. */
  embedding?: EmbeddingModel;
  /** Mutual-kNN k (method notes: 8). */
  k?: number;
  /**
   * Awaited after a step of the full rebuild: 'write' = the schema edges are replaced, the semantic side and
   * the journal are not yet. The crash test pauses a child there so its SIGKILL provably lands inside a rebuild.
   */
  afterStep?: (step: 'write') => Promise<void> | void;
  /**
   * How the tfidf kNN lists are rebuilt: 'exact' (default; explicit maintenance) or 'auto' (automatic
   * rebuilds: the bounded approximate pass from `approximateFrom` memories on, the context marked
   * approximate; compactSemantic, docs/semantic-knn.md "Bulk imports of large contexts").
   */
  knn?: 'exact' | 'auto';
  /** Size from which automatic rebuilds are bounded and drift compaction is deferred (APPROXIMATE_KNN_FROM). */
  approximateFrom?: number;
  /** Automatic rebuilds' exact-pass work bound per bounded read (CompactSemanticOptions.exactWorkRatio). */
  exactWorkRatio?: number;
  /**
   * Where an incremental update's automatic (5%-rule) compaction runs: given (the facade), the update marks the
   * context and hands it over, and the compaction runs in steps after the write (compactSemanticInSteps);
   * absent, it runs inside the write, in one turn.
   */
  compactInBackground?: CompactionScheduler;
  /**
   * Given (a facade opened with `semanticUpdates: 'after-write'`), an incremental update's tfidf kNN side is
   * not applied inside the write: the changed ids go to the context's semantic backlog and this is called with
   * the context, whose drain (drainSemanticBacklog) applies them in a turn of their own right after the write.
   * The write's records, lexical postings and schema edges are in when it returns; its semantic_knn edges
   * follow. Ignored with an embedding model (the dense lists stay in the write).
   */
  semanticAfterWrite?: (contextId: string) => void;
  /**
   * Runs each write of a full rebuild as one turn of the caller's write queue, its reads and compute outside
   * them with this thread's queued writes let in between slices (a user's bulk import through the facade,
   * which holds that user meanwhile: other users' writes wait for one piece of the rebuild, not all of it).
   * Default: at once. The result is the same either way.
   */
  turn?: CompactionTurn;
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

/** Documents built per slice between pauses. */
const DOCUMENT_SLICE = 5000;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const SCHEMA_RELATIONS: ReadonlyArray<
  [SchemaRelationType, (records: readonly MemoryRecord[]) => RecordPair[]]
> = [
  ['same_round', sameRoundPairs],
  ['consecutive_turn', consecutiveTurnPairs],
  ['event_bridge', eventBridgePairs],
  ['same_record', sameRecordPairs],
  ['record_grounding', recordGroundingPairs],
  ['supersedes', supersedesPairs],
];

/**
 * Recomputes every relation of one context from its stored records, exactly: the schema types with ONE
 * `replaceEdges` call, then the semantic side by compaction (compactSemantic: a fresh IDF snapshot, exact
 * kNN lists, semantic_knn edges; or compactDense over record vectors when an embedding model is configured).
 * This is the explicit-maintenance path (`compact`, bulk imports, upgrades): it walks the whole context.
 * Writes go through updateRelations, which is incremental. Relations are per context: nothing crosses contexts.
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

  // In turns (a facade's import), the reads and the compute give the thread back between slices.
  const turn = options.turn ?? atOnce;
  const pause = options.turn === undefined ? undefined : yieldToEventLoop;

  // A large rebuild collects garbage between its phases, so that one phase's garbage is not under the next
  // one's peak (collect-garbage.ts); the first collection takes what the write before it left (a bulk import's
  // records phase).
  const large = (await store.countMemories(contextId)) >= COLLECT_FROM;
  if (large) collectGarbage();
  let records: MemoryRecord[] | undefined = await loadRecords(store, contextId, pause);
  lap('load');

  let merger: RelationEdgeMerger | undefined = new RelationEdgeMerger();
  for (const [type, compute] of SCHEMA_RELATIONS) {
    // Each type's pair list is garbage once merged, before the next type is computed.
    merger.addSchema(type, compute(records));
    // A type's pairs and scratch are garbage now (same_round alone grew a 1M heap by ~0.3 GB).
    if (large) collectGarbageIfGrown();
    lap(type);
    await pause?.();
  }
  // Without an embedding model the rest reads only each record's id and semantic text: the records (~1/3 of
  // the heap at 1M memories) are dropped before the schema edges are built and written.
  let documents: TfidfDocument[] | undefined;
  if (!options.embedding) {
    documents = new Array<TfidfDocument>(records.length);
    for (let at = 0; at < records.length; at++) {
      const record = records[at]!;
      documents[at] = { id: record.id, text: semanticText(record) };
      if (pause && (at + 1) % DOCUMENT_SLICE === 0) await pause();
    }
    records = undefined;
  }
  if (large && records === undefined) collectGarbage();
  // Neither the merger nor its edges outlive the write (a local would keep them through the kNN pass: ~1M edge
  // objects at 1M memories).
  let schemaEdges: MemoryEdge[] | undefined = merger.edges(contextId);
  merger = undefined;
  await pause?.();
  await turn(() => store.replaceEdges(contextId, SCHEMA_RELATION_TYPES, schemaEdges!));
  schemaEdges = undefined;
  lap('write');
  await options.afterStep?.('write');

  let semanticSpace = 'tfidf';
  if (options.embedding) {
    const embedding = options.embedding;
    // One turn, as before: the model's vectors and their lists (not split: this path waits on model calls).
    await turn(async () => {
      const embedded = await embedViews(store, contextId, records!, embedding);
      if (embedded.ok) {
        await store.putVectors(
          contextId,
          recordSpace(embedded.space),
          [...embedded.recordVectors].map(([memoryId, vector]) => ({
            memoryId,
            kind: 'text' as const,
            key: 'record',
            vector,
          })),
        );
        await compactDense(store, contextId, embedded.space, { k });
        semanticSpace = embedded.space;
      } else {
        warnings.push(embedded.warning);
      }
    });
  }
  if (semanticSpace === 'tfidf') {
    const compaction = await compactSemantic(store, contextId, {
      k,
      // Handed over, not shared: they can be collected once the TF-IDF space is built.
      ...(documents === undefined
        ? {
            records: () => {
              const all = records!;
              records = undefined;
              return all;
            },
          }
        : {
            documents: () => {
              const all = documents!;
              documents = undefined;
              return all;
            },
          }),
      method: options.knn ?? 'exact',
      ...(options.approximateFrom === undefined ? {} : { approximateFrom: options.approximateFrom }),
      ...(options.exactWorkRatio === undefined ? {} : { exactWorkRatio: options.exactWorkRatio }),
      ...(options.turn === undefined ? {} : { turn: options.turn, pause: yieldToEventLoop }),
    });
    if (compaction.knnHelperFailure !== undefined) {
      warnings.push(
        `semantic_knn: ${compaction.knnHelperFailure}; the pass ran on one thread (same edges, slower)`,
      );
    }
  }
  lap('semantic_knn');
  seconds.total = (performance.now() - started) / 1000;
  return { counts: await store.countEdges(contextId), seconds, semanticSpace, warnings };
}
