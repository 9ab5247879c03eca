import type { ArchiveStore } from '../../store/archive-store-spec.ts';

/**
 * Contexts of at least this many memories get their AUTOMATIC semantic rebuilds (bulk import, a bulk delta,
 * recovery of an interrupted update) from the bounded pass (boundedKnnLists: approximate, bounded reads per
 * memory) instead of the exact all-pairs pass, and their automatic drift compaction (5% rule) is deferred to
 * explicit maintenance (`graphmemix compact`, gm.compact: exact). Measured in docs/semantic-knn.md ("Bulk
 * imports of large contexts"): below it the exact pass takes under ~1 min of CPU and every archive keeps exact
 * edges.
 */
export const APPROXIMATE_KNN_FROM = 200_000;

/** Meta key `semantic-approximate:<context>`: present while the context's kNN graph is not the exact one. */
export const APPROXIMATE_META_PREFIX = 'semantic-approximate:';

/** Why a context's semantic_knn edges are not the exact rebuild's. */
export interface ApproximateKnnMark {
  /**
   * 'bulk-import': the lists came from the bounded pass; 'compaction-deferred': the snapshot drifted past
   * the compaction rule and automatic compaction was skipped (the context is that large); 'compaction-failed':
   * an automatic compaction in steps failed and so did its one-turn recovery (`error` says why);
   * 'exact-work-bound': an automatic rebuild's exact pass passed its work bound (text whose memories share
   * mostly common words makes it quadratic) and the bounded pass made the lists.
   */
  reason: 'bulk-import' | 'compaction-deferred' | 'compaction-failed' | 'exact-work-bound';
  error?: string;
  /** createdAt of the IDF snapshot the approximation starts from. */
  since: string;
  /** Memories in that snapshot. */
  documents: number;
}

export async function readApproximateMark(
  store: ArchiveStore,
  contextId: string,
): Promise<ApproximateKnnMark | undefined> {
  return store.getMeta<ApproximateKnnMark>(`${APPROXIMATE_META_PREFIX}${contextId}`);
}

export async function writeApproximateMark(
  store: ArchiveStore,
  contextId: string,
  mark: ApproximateKnnMark | undefined,
): Promise<void> {
  await store.setMeta(`${APPROXIMATE_META_PREFIX}${contextId}`, mark);
}

/** The mark of lists from the bounded pass: why (a size past the threshold, or the exact pass's work bound). */
export function approximateMarkOf(
  state: { space: { size: number }; exactWorkBoundPassed?: true },
  since: string,
): ApproximateKnnMark {
  return {
    reason: state.exactWorkBoundPassed ? 'exact-work-bound' : 'bulk-import',
    since,
    documents: state.space.size,
  };
}

/** The line a report or stats shows for a mark. */
export function describeApproximateMark(mark: ApproximateKnnMark): string {
  const what =
    mark.reason === 'bulk-import'
      ? `bounded bulk pass over ${mark.documents} memories`
      : mark.reason === 'exact-work-bound'
        ? `bounded pass over ${mark.documents} memories: the exact pass passed its work bound`
        : mark.reason === 'compaction-failed'
          ? `automatic compaction failed: ${mark.error ?? 'unknown error'}`
          : `automatic compaction deferred (snapshot of ${mark.documents} memories)`;
  return `semantic_knn approximate since ${mark.since} (${what}); \`graphmemix compact\` rebuilds it exactly`;
}
