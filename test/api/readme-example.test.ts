import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/index.ts';

// The library snippet of README.md, so the documented entry point keeps working.
describe('README library example', () => {
  it('adds a memory and retrieves it as evidence with a trace', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      const report = await gm.addMemories('alice', [
        { id: 'm1', text: 'Design review moved to Monday', timestamp: '2024-04-03' },
        { id: 'm2', text: 'Bought oat milk and bread', timestamp: '2024-04-04' },
      ]);
      expect(report.imported).toBe(2);
      const result = await gm.retrieve('alice', 'When is the design review?', { k: 10 });
      expect(result.evidence[0]?.memoryId).toBe('m1');
      expect(result.packetText).toContain('Design review moved to Monday');
      expect(result.trace.components.nodeVerifier).toBe('lexical-context-support');
      expect(await gm.retrieve('bob', 'When is the design review?')).toMatchObject({ evidence: [] });
    } finally {
      await gm.close();
    }
  });
});
