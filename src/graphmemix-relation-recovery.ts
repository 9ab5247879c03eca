import type { BuildRelationsOptions } from './digest/build-relations.ts';
import { updateRelations } from './digest/update-relations.ts';
import type { WriteQueue } from './graphmemix-write-queue.ts';
import type { ArchiveStore } from './store/archive-store-spec.ts';

/** Thrown into a recovery's next turn once its facade closes: the rest waits for the next open. */
class RecoveryStopped extends Error {}

/**
 * Applies after open the relation journal a stopped process left: the schema (and semantic) relations of
 * memories whose write committed its records but not its relation update (an import killed between its last
 * batch and its relation stage). Before round 52 they waited for the user's next write, and questions meanwhile
 * had no sign of it (now they are flagged `relations_pending`). Each such user gets the relation update an import
 * runs, in turns of the facade's write queue holding the user (other users' writes go between them); a failure
 * leaves the journal for the next write or open. Closing stops it at its next turn (a turn is one transaction:
 * what is left stays journaled), so a server's shutdown does not wait for a large rebuild.
 */
export class RelationRecovery {
  private stopping = false;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: ArchiveStore,
    private readonly writes: WriteQueue,
    private readonly options: () => Omit<BuildRelationsOptions, 'turn'>,
  ) {}

  /** Starts applying every user's pending journal in the background (one user after another). */
  start(): void {
    this.running = (async () => {
      const contexts = await this.store.contextsWithRelationWork().catch(() => [] as string[]);
      for (const contextId of contexts) {
        if (this.stopping) return;
        try {
          await this.writes.holding(contextId, async () => {
            // A user being forgotten: its journal goes with it, and edges written now could outlive the forget.
            if (await this.store.isForgetting?.(contextId)) return;
            await updateRelations(this.store, contextId, {
              ...this.options(),
              turn: (work) => {
                if (this.stopping) return Promise.reject(new RecoveryStopped());
                return this.writes.turn(contextId, work);
              },
            });
          });
        } catch (error) {
          if (error instanceof RecoveryStopped) return;
          // Left journaled: questions keep flagging relations_pending, the user's next write tries again.
        }
      }
    })();
  }

  /** Resolves once the recovery has ended (applied everything, or stopped). */
  idle(): Promise<void> {
    return this.running;
  }

  /** Stops at the next turn and waits for the one under way. */
  async close(): Promise<void> {
    this.stopping = true;
    await this.running;
  }
}
