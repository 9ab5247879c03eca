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

describe('deleting a memory', () => {
  it('removes it from retrieval and re-links the turns around it', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories('alice', [
        { id: 't1', sessionId: 's', role: 'user', sequence: 1, text: 'Booked the ferry to Porto' },
        { id: 't2', sessionId: 's', role: 'assistant', sequence: 2, text: 'Which day is the ferry?' },
        { id: 't3', sessionId: 's', role: 'user', sequence: 3, text: 'Thursday morning at nine' },
      ]);
      const before = await gm.store.neighbors('alice', ['t1']);
      expect(before.some((e) => e.b === 't2' && e.types.includes('consecutive_turn'))).toBe(true);
      expect(await gm.deleteMemory('alice', 't2')).toBe(true);
      expect(await gm.getMemory('alice', 't2')).toBeUndefined();
      const after = await gm.store.neighbors('alice', ['t1']);
      expect(after.some((e) => e.b === 't2' || e.a === 't2')).toBe(false);
      expect(after.some((e) => e.b === 't3' && e.types.includes('consecutive_turn'))).toBe(true);
      const result = await gm.retrieve('alice', 'Which day is the ferry?');
      expect(result.evidence.map((e) => e.memoryId)).not.toContain('t2');
      expect(await gm.deleteMemory('alice', 't2')).toBe(false);
    } finally {
      await gm.close();
    }
  });
});
