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
import { updateDenseKnn } from './update-dense-knn.ts';
import type { SchemaDelta } from './update-schema-relations.ts';
import { updateSemanticKnn } from './update-semantic-knn.ts';

export interface SemanticRelationsReport {
  /** 'tfidf' or the embedding space the lists live in. */
  space: string;
  mode: 'incremental' | 'compacted';
  warnings: string[];
}

/**
 * The semantic (mutual-kNN) side of an incremental relation update. Offline: the frozen-IDF TF-IDF lists
 * (updateSemanticKnn), compacted exactly when the compaction rule says the snapshot drifted (changes since
 * the snapshot >= 5% of it: amortised constant work per write; docs/semantic-knn.md). With an embedding
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
  const result = await updateSemanticKnn(store, contextId, delta, { approximateFrom });
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
    await compactSemantic(store, contextId, options.k === undefined ? {} : { k: options.k });
    return { space: 'tfidf', mode: 'compacted', warnings };
  }
  return { space: 'tfidf', mode: result.mode, warnings };
}
