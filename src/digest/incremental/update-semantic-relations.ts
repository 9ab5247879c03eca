import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { BuildRelationsOptions } from '../build-relations.ts';
import { embedViews } from '../embed-views.ts';
import {
  APPROXIMATE_KNN_FROM,
  describeApproximateMark,
  readApproximateMark,
  writeApproximateMark,
} from './approximate-knn-mark.ts';
import { compactSemantic } from './compact-semantic.ts';
import {
  appendBacklog,
  type CompactionScheduler,
  canCompactInSteps,
  compactionLive,
  newCompactionMark,
  readCompactionMark,
  writeCompactionMark,
} from './semantic-compaction-mark.ts';
import { updateDenseKnn } from './update-dense-knn.ts';
import type { SchemaDelta } from './update-schema-relations.ts';
import { updateSemanticKnn } from './update-semantic-knn.ts';

/**
 * With compactions in steps, the share of the snapshot a write's delta must reach to be compacted inside the
 * write (one turn) instead of added incrementally and compacted after it in steps. The rule's 5% made every
 * write of a small context a whole compaction in one turn: 102-memory adds into a growing user compacted it
 * on each of their first 20 writes, 0.5 -> 5.3 s each, every other user's write waiting (round 31). A
 * compaction costs ~2.6-0.4 ms a memory, an incremental add ~10-2.7 ms (2 KB texts at 2k; chat text at 10k:
 * docs/living-archive.md "Round 31"), so the one turn is shorter compacting only from a delta of about
 * 1/4-1/8 of the context: a quarter, the larger share. (Tried in round 31 alone, it let the compactions it
 * started run without end under a flood; it came back in round 32 with the hold and cooldown of
 * BackgroundCompactions.)
 */
export const BULK_RATIO_WITH_STEPS = 0.25;

export interface SemanticRelationsReport {
  /** 'tfidf' or the embedding space the lists live in. */
  space: string;
  /**
   * 'deferred': a compaction in steps is running; the ids went to its backlog. 'after-write': they went to the
   * backlog for the drain after the write (`semanticAfterWrite`).
   */
  mode: 'incremental' | 'compacted' | 'deferred' | 'after-write';
  warnings: string[];
}

/**
 * The semantic (mutual-kNN) side of an incremental relation update. Offline: the frozen-IDF TF-IDF lists
 * (updateSemanticKnn), compacted exactly when the compaction rule says the snapshot drifted (changes since
 * the snapshot >= 5% of it: amortised constant work per write; docs/semantic-knn.md): inside this write, or,
 * given `compactInBackground`, in steps after it (the context is marked; compact-semantic-steps.ts). While such
 * a run is live the ids go to its backlog instead ('deferred'); a stale mark restarts it. With an embedding
 * model: the changed records' views are embedded and their record vectors maintained in the dense lists
 * (updateDenseKnn); a failing model falls back to tfidf with a warning, as the full rebuild does.
 * A context whose snapshot holds APPROXIMATE_KNN_FROM memories or more is not compacted here: it is marked
 * approximate ('compaction-deferred') and left to explicit maintenance.
 */
export async function updateSemanticRelations(
  store: ArchiveStore,
  contextId: string,
  delta: SchemaDelta,
  options: BuildRelationsOptions,
): Promise<SemanticRelationsReport> {
  const warnings: string[] = [];
  if (options.embedding) {
    const records = delta.upserted.map((upsert) => upsert.after);
    const embedded = await embedViews(store, contextId, records, options.embedding);
    if (embedded.ok) {
      const result = await updateDenseKnn(
        store,
        contextId,
        embedded.space,
        {
          upserted: [...embedded.recordVectors].map(([memoryId, vector]) => ({ memoryId, vector })),
          removed: delta.removed.map((record) => record.id),
        },
        options.k === undefined ? {} : { k: options.k },
      );
      return { space: embedded.space, mode: result.mode, warnings };
    }
    warnings.push(embedded.warning);
  }
  const approximateFrom = options.approximateFrom ?? APPROXIMATE_KNN_FROM;
  const running = await readCompactionMark(store, contextId);
  if (running !== undefined) {
    const ids = [...delta.upserted.map((u) => u.after.id), ...delta.removed.map((record) => record.id)];
    if (compactionLive(running)) {
      // The run's steps are the only writer of this context's semantic state: the ids wait for its replay.
      await appendBacklog(store, contextId, ids);
      options.compactInBackground?.deferred?.(contextId, ids.length);
      return { space: 'tfidf', mode: 'deferred', warnings };
    }
    // A run whose process was killed left a mixed state and a backlog. A context without a
    // snapshot (forgotten and written again) compacts at once, as any first update does.
    if (
      options.compactInBackground &&
      canCompactInSteps(store) &&
      (await store.semantic.getSnapshot(contextId)) !== undefined
    ) {
      await appendBacklog(store, contextId, ids);
      await startCompaction(store, contextId, options.compactInBackground);
      warnings.push('restarted an interrupted semantic compaction');
      return { space: 'tfidf', mode: 'deferred', warnings };
    }
    await compactSemantic(store, contextId, {
      ...(options.k === undefined ? {} : { k: options.k }),
      method: 'auto',
      approximateFrom,
    });
    warnings.push('finished an interrupted semantic compaction in one turn');
    return { space: 'tfidf', mode: 'compacted', warnings };
  }
  if (options.semanticAfterWrite && canCompactInSteps(store)) {
    const ids = [...delta.upserted.map((u) => u.after.id), ...delta.removed.map((record) => record.id)];
    await appendBacklog(store, contextId, ids);
    options.semanticAfterWrite(contextId);
    return { space: 'tfidf', mode: 'after-write', warnings };
  }
  const inSteps = options.compactInBackground !== undefined && canCompactInSteps(store);
  const result = await updateSemanticKnn(store, contextId, delta, {
    approximateFrom,
    ...(inSteps ? { bulkRatio: BULK_RATIO_WITH_STEPS } : {}),
  });
  if (result.needsCompaction) {
    const snapshot = await store.semantic.getSnapshot(contextId);
    if (snapshot !== undefined && snapshot.documents >= approximateFrom) {
      // A large context: an exact compaction would stall this write for minutes to hours (superlinear in
      // the context). It is deferred to explicit maintenance (`graphmemix compact`); the context is marked
      // once, so the next writes pay one meta read.
      const marked = await readApproximateMark(store, contextId);
      if (marked?.reason !== 'compaction-deferred' || marked.since !== snapshot.createdAt) {
        const mark = {
          reason: 'compaction-deferred',
          since: snapshot.createdAt,
          documents: snapshot.documents,
        } as const;
        await writeApproximateMark(store, contextId, mark);
        warnings.push(describeApproximateMark(mark));
      }
      return { space: 'tfidf', mode: result.mode, warnings };
    }
    if (inSteps && options.compactInBackground) {
      // In steps, after this write (the facade's queue): no writer waits for the whole compaction. Not yet if
      // the context's last run ended too recently (BackgroundCompactions' cooldown): a user writing without
      // pause would otherwise compact without pause, the whole user every 5% of it.
      if (options.compactInBackground.ready?.(contextId) === false) {
        return { space: 'tfidf', mode: result.mode, warnings };
      }
      await startCompaction(store, contextId, options.compactInBackground);
      return { space: 'tfidf', mode: result.mode, warnings };
    }
    await compactSemantic(store, contextId, options.k === undefined ? {} : { k: options.k });
    return { space: 'tfidf', mode: 'compacted', warnings };
  }
  return { space: 'tfidf', mode: result.mode, warnings };
}

/** Marks the context (in the caller's write) and hands the run to the scheduler. */
async function startCompaction(
  store: ArchiveStore,
  contextId: string,
  schedule: CompactionScheduler,
): Promise<void> {
  const mark = newCompactionMark();
  await writeCompactionMark(store, contextId, mark);
  schedule(contextId, mark);
}
