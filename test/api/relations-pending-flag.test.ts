import { describe, expect, it } from 'vitest';
import { ingestItems } from '../../src/digest/ingest.ts';
import { openGraphmemix } from '../../src/graphmemix.ts';

// Round 52 audit: an import killed between its records and its relation update left every memory without
// schema edges, and questions answered with no sign of it.
describe('relations_pending', () => {
  it('flags questions while journal entries wait, and not once a write applied them', async () => {
    const gm = await openGraphmemix({ db: 'memory:' });
    const items = Array.from({ length: 40 }, (_, i) => ({
      type: 'record' as const,
      record: {
        id: `m${i}`,
        contextId: 'ann',
        role: i % 2 === 0 ? 'user' : 'assistant',
        sessionId: 's1',
        roundId: `r${Math.floor(i / 2)}`,
        text: `we talked about the garden and the train, turn ${i}`,
      } as never,
      source: { file: 'test', line: i + 1 },
    }));
    // The records' batches without the relation stage: what a process killed before it leaves.
    await ingestItems(gm.store, items, { contextId: 'ann', relations: false });
    expect(await gm.store.hasRelationWork('ann')).toBe(true);
    const before = await gm.retrieve('ann', 'what about the garden?');
    expect(before.trace.flags).toContain('relations_pending');
    await gm.addMemories('ann', [{ id: 'late', text: 'one more note about the garden' }]);
    expect(await gm.store.hasRelationWork('ann')).toBe(false);
    const after = await gm.retrieve('ann', 'what about the garden?');
    expect(after.trace.flags).not.toContain('relations_pending');
    expect((await gm.store.countEdges('ann')).same_round).toBeGreaterThan(0);
    await gm.close();
  });
});
