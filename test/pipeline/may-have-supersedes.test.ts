import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import type { Graphmemix } from '../../src/graphmemix-api.ts';
import { mayHaveSupersedes } from '../../src/pipeline/may-have-supersedes.ts';
import type { ArchiveStore } from '../../src/store/archive-store-spec.ts';
import { createTestDatabase, dropTestDatabases, PG_SKIP } from '../store/postgres-test-db.ts';

/**
 * The packet's version links are skipped while a context has no supersedes edge (src/pipeline/
 * may-have-supersedes.ts). A supersedes edge written later, by another connection or by this one, must show
 * on the next retrieve.
 */
const dir = mkdtempSync(join(tmpdir(), 'gmx-may-supersede-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterAll(dropTestDatabases);

const BEFORE = [
  {
    id: 'appt',
    text: 'Dentist appointment with Dr. Ruiz on Monday June 3 at 9:00',
    timestamp: '2024-05-20T10:00:00Z',
  },
  { id: 'milk', text: 'Buy oat milk and coffee beans', timestamp: '2024-05-21T08:00:00Z' },
];
const MOVED = {
  id: 'moved',
  text: 'Update: the dentist appointment moved to Thursday June 6 at 11:00',
  timestamp: '2024-05-28T16:30:00Z',
};
const QUESTION = 'When is the dentist appointment now?';

/** No evidence of the retrieve carries a version mark. */
async function expectUnmarked(gm: Graphmemix): Promise<void> {
  const result = await gm.retrieve('ann', QUESTION, { k: 4 });
  expect(result.evidence.every((item) => item.version === undefined)).toBe(true);
}

/** The retrieve marks 'moved' as the current version of 'appt'. */
async function expectMarked(gm: Graphmemix): Promise<void> {
  const result = await gm.retrieve('ann', QUESTION, { k: 4 });
  expect(result.evidence.find((item) => item.memoryId === 'moved')?.version).toEqual({
    status: 'current',
    supersedes: ['appt'],
    supersededBy: [],
  });
}

describe('mayHaveSupersedes', () => {
  it('answers from the edge counts, and a supersedes edge written later shows on the next retrieve', async () => {
    const file = join(dir, 'a.db');
    const reader = await openGraphmemix({ db: file });
    const writer = await openGraphmemix({ db: file });
    try {
      await writer.addMemories('ann', BEFORE);
      await writer.addMemories('bob', [...BEFORE, MOVED]);
      expect(await mayHaveSupersedes(reader.store, 'ann')).toBe(false);
      expect(await mayHaveSupersedes(reader.store, 'bob')).toBe(true);
      await expectUnmarked(reader);

      // Another connection commits the newer version: the remembered "none" is dropped.
      await writer.addMemories('ann', [MOVED]);
      expect(await mayHaveSupersedes(reader.store, 'ann')).toBe(true);
      await expectMarked(reader);

      // This connection's own write (a forget) moves the generation too.
      await reader.deleteMemory('ann', 'moved');
      expect(await mayHaveSupersedes(reader.store, 'ann')).toBe(false);
      await expectUnmarked(reader);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  // PostgreSQL: the generation exists inside a question's read unit only, so the answer is seen through
  // retrieve (the counts read once per generation, then remembered).
  it.skipIf(PG_SKIP !== undefined)(
    'PostgreSQL: a supersedes edge written by another process shows on the next retrieve',
    async () => {
      const url = await createTestDatabase();
      const reader = await openGraphmemix({ db: url });
      const writer = await openGraphmemix({ db: url });
      try {
        await writer.addMemories('ann', BEFORE);
        await expectUnmarked(reader);
        await expectUnmarked(reader); // the remembered answer
        await writer.addMemories('ann', [MOVED]);
        await expectMarked(reader);
        await reader.deleteMemory('ann', 'moved');
        await expectUnmarked(reader);
      } finally {
        await reader.close();
        await writer.close();
      }
    },
    60_000,
  );

  it('without a read generation always says true and reads nothing', async () => {
    let counted = 0;
    const store = {
      countEdges: async () => {
        counted++;
        return { supersedes: 0 };
      },
    } as unknown as ArchiveStore;
    expect(await mayHaveSupersedes(store, 'ann')).toBe(true);
    expect(counted).toBe(0);
    const inTransaction = { ...store, readGeneration: () => undefined } as unknown as ArchiveStore;
    expect(await mayHaveSupersedes(inTransaction, 'ann')).toBe(true);
    expect(counted).toBe(0);
  });

  it('reads the counts once per generation and context', async () => {
    let counted = 0;
    let generation = 'g1';
    const store = {
      readGeneration: () => generation,
      countEdges: async (contextId: string) => {
        counted++;
        return { supersedes: contextId === 'bob' ? 1 : 0 };
      },
    } as unknown as ArchiveStore;
    expect(await mayHaveSupersedes(store, 'ann')).toBe(false);
    expect(await mayHaveSupersedes(store, 'ann')).toBe(false);
    expect(await mayHaveSupersedes(store, 'bob')).toBe(true);
    expect(await mayHaveSupersedes(store, 'ann')).toBe(false); // contexts alternating keep their answers
    expect(counted).toBe(2);
    generation = 'g2';
    expect(await mayHaveSupersedes(store, 'ann')).toBe(false);
    expect(counted).toBe(3);
  });
});
