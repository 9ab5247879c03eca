import type { ArchiveStore } from '../../store/archive-store-spec.ts';
import { RELATION_TYPES } from '../../types/relation.ts';
import { type BuildRelationsOptions, loadRecords, semanticPairs } from '../build-relations.ts';
import { mergeRelationEdges } from '../relations/merge-relation-edges.ts';
import type { SchemaDelta } from './update-schema-relations.ts';

/** The semantic (mutual-kNN) side of an incremental relation update. */
export async function updateSemanticRelations(
  store: ArchiveStore,
  contextId: string,
  delta: SchemaDelta,
  options: BuildRelationsOptions,
): Promise<{ warnings: string[] }> {
  if (delta.upserted.length === 0 && delta.removed.length === 0) return { warnings: [] };
  const records = await loadRecords(store, contextId);
  const { semantic, warning } = await semanticPairs(store, contextId, records, options);
  const edges = mergeRelationEdges(contextId, {}, semantic);
  await store.replaceEdges(contextId, [RELATION_TYPES[RELATION_TYPES.length - 1]!], edges);
  return { warnings: warning === undefined ? [] : [warning] };
}
