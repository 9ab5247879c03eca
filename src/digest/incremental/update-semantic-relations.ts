import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import type { BuildRelationsOptions } from '../build-relations.ts';
import { embedViews } from '../embed-views.ts';
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
  const result = await updateSemanticKnn(store, contextId, delta);
  if (result.needsCompaction) {
    await compactSemantic(store, contextId, options.k === undefined ? {} : { k: options.k });
    return { space: 'tfidf', mode: 'compacted', warnings };
  }
  return { space: 'tfidf', mode: result.mode, warnings };
}
