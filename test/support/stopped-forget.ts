import { expect } from 'vitest';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';

/**
 * Starts forgetting `contextId` and stops it after `steps` of its scheduled transactions (the first marks the
 * user), as a process killed there leaves it: the committed steps stay, the rest never runs.
 */
export async function stoppedForget(store: ArchiveStore, contextId: string, steps: number): Promise<void> {
  let ran = 0;
  await expect(
    store.deleteContext(contextId, {
      schedule: async (step) => {
        if (++ran > steps) throw new Error('stopped');
        return step();
      },
    }),
  ).rejects.toThrow('stopped');
}
