import { type ArchiveStore, inUnitOfWork } from '../../store/archive-store-spec.ts';
import type { BuildRelationsOptions } from '../build-relations.ts';
import { compactionLive, currentState, readCompactionMark, takeBacklog } from './semantic-compaction-mark.ts';
import { updateSemanticRelations } from './update-semantic-relations.ts';

/**
 * Ids one drain turn applies at most: a turn is about one add-100's semantic update at 1M (~0.5 s, docs/
 * living-archive.md "Round 37"), so a backlog grown by a burst of writes is applied in several turns with
 * other writes between them, and a larger backlog costs no more per id (one insertChunk of up to 256 shares
 * its reads).
 */
export const DRAIN_IDS_PER_TURN = 256;

export interface DrainReport {
  /** Ids applied by this turn. */
  applied: number;
  /** Rows are left (more turns needed). False also when a compaction run owns the backlog. */
  left: boolean;
  warnings: string[];
}

/**
 * One turn of the after-write semantic update (BuildRelationsOptions.semanticAfterWrite): up to `perTurn`
 * backlog ids of the context applied as one incremental update of their current state, through the same path
 * as an update inside a write (updateSemanticRelations: the 5% compaction rule, the approximate mark of large
 * contexts), and dropped from the backlog in the same unit of work, so a process killed during a drain leaves
 * the rows for the next one. While a compaction run's mark is on the context the backlog is the run's (its
 * replay applies it; a stale mark is restarted here, as by the context's next write), or while the context is being
 * forgotten: nothing is taken.
 */
export async function drainSemanticBacklog(
  store: ArchiveStore,
  contextId: string,
  options: BuildRelationsOptions = {},
  perTurn = DRAIN_IDS_PER_TURN,
): Promise<DrainReport> {
  return inUnitOfWork(store, contextId, async () => {
    const none = { applied: 0, left: false, warnings: [] };
    // A user being forgotten (a forget a stopped process left, resumed after open): its rows go with it, and an
    // update now would write semantic state the forget's later steps may not delete.
    if (await store.isForgetting?.(contextId)) return none;
    const { semanticAfterWrite: _deferred, embedding: _dense, ...inWrite } = options;
    const mark = await readCompactionMark(store, contextId);
    if (mark !== undefined) {
      if (compactionLive(mark)) return none;
      // A killed run's mark: restarted here as a write would (with no ids of its own), instead of leaving the
      // backlog to the user's next write (round 52 audit: an open after a SIGKILL drained nothing).
      const restart = await updateSemanticRelations(
        store,
        contextId,
        await currentState(store, contextId, []),
        inWrite,
      );
      return { applied: 0, left: false, warnings: restart.warnings };
    }
    const { ids, settle } = await takeBacklog(store, contextId, perTurn);
    if (ids.length === 0) return { applied: 0, left: !(await settle()), warnings: [] };
    const delta = await currentState(store, contextId, ids);
    const update = await updateSemanticRelations(store, contextId, delta, inWrite);
    // A compaction in this turn read every record and dropped every row (taken or not): nothing to settle.
    const done = update.mode === 'compacted' ? true : await settle();
    return { applied: ids.length, left: !done, warnings: update.warnings };
  });
}
