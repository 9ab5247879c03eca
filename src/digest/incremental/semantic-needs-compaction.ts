import type { ArchiveStore } from '../../store/archive-store-spec.ts';

/** Compact once the documents put or removed since the snapshot reach this share of its size... */
export const COMPACTION_CHANGE_RATIO = 0.2;
/** ...but never for fewer changes than this (small contexts would otherwise compact on every write). */
export const COMPACTION_MIN_CHANGES = 64;

export interface CompactionAdvice {
  needed: boolean;
  reason: 'no-snapshot' | 'drift' | 'fresh' | 'empty';
  /** Documents put or removed since the snapshot, and the count that triggers compaction. */
  changes: number;
  limit: number;
}

/**
 * The automatic compaction rule (docs/semantic-knn.md): a context with memories but no snapshot needs one;
 * otherwise compact when changes since the snapshot >= max(COMPACTION_MIN_CHANGES, 20% of the snapshot's
 * documents). Between compactions the IDF is frozen, so this bounds how stale it gets (the IDF of a term
 * moves by at most ln(1.2) ≈ 0.18 from growth alone) while the amortised compaction cost per write stays
 * constant: a rebuild of n documents every 0.2 n writes.
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
  const limit = Math.max(
    rule.minChanges ?? COMPACTION_MIN_CHANGES,
    Math.ceil((rule.ratio ?? COMPACTION_CHANGE_RATIO) * snapshot.documents),
  );
  const needed = snapshot.changes >= limit;
  return { needed, reason: needed ? 'drift' : 'fresh', changes: snapshot.changes, limit };
}
