import type { ArchiveStore } from '../../store/archive-store-spec.ts';

/** Compact once the documents put or removed since the snapshot reach this share of its size... */
export const COMPACTION_CHANGE_RATIO = 0.05;
/** ...but never for fewer changes than this (small contexts would otherwise compact on every write). */
export const COMPACTION_MIN_CHANGES = 16;

export interface CompactionAdvice {
  needed: boolean;
  reason: 'no-snapshot' | 'drift' | 'fresh' | 'empty';
  /** Documents put or removed since the snapshot, and the count that triggers compaction. */
  changes: number;
  limit: number;
}

/**
 * The automatic compaction rule (docs/semantic-knn.md): a context with memories but no snapshot needs one;
 * otherwise compact when changes since the snapshot >= max(COMPACTION_MIN_CHANGES, 5% of the snapshot's
 * documents). Between compactions the IDF is frozen; 5% growth keeps the graph's Jaccard agreement with a
 * fresh full rebuild at about 0.97 (measured, bench/knn-agreement.ts), and a rebuild of n memories every
 * 0.05 n writes keeps the amortised compaction cost per write constant in n.
 */
export async function semanticNeedsCompaction(
  store: ArchiveStore,
  contextId: string,
  rule: { ratio?: number; minChanges?: number } = {},
): Promise<CompactionAdvice> {
  const snapshot = await store.semantic.getSnapshot(contextId);
  if (!snapshot) {
    const memories = await store.countMemories(contextId);
    return {
      needed: memories > 0,
      reason: memories > 0 ? 'no-snapshot' : 'empty',
      changes: memories,
      limit: 0,
    };
  }
  const limit = compactionLimit(snapshot.documents, rule);
  const needed = snapshot.changes >= limit;
  return { needed, reason: needed ? 'drift' : 'fresh', changes: snapshot.changes, limit };
}

/** Changes since a snapshot of `documents` memories that call for compaction under `rule`. */
export function compactionLimit(
  documents: number,
  rule: { ratio?: number; minChanges?: number } = {},
): number {
  return Math.max(
    rule.minChanges ?? COMPACTION_MIN_CHANGES,
    Math.ceil((rule.ratio ?? COMPACTION_CHANGE_RATIO) * documents),
  );
}
