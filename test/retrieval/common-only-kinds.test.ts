import { describe, expect, it } from 'vitest';
import { openGraphmemix } from '../../src/graphmemix.ts';
import { COMMON_TERM_SHARE, commonOnlyKinds } from '../../src/retrieval/bm25-index.ts';
import type { LexicalSearchOptions } from '../../src/store/archive-store-spec.ts';

describe('commonOnlyKinds', () => {
  it('leaves out a kind whose every query term is in more than a quarter of it, beside an informative kind', () => {
    expect(COMMON_TERM_SHARE).toBe(0.25);
    const kinds = new Map([
      ['metadata', { docs: 100, dfs: [50, 26] }],
      ['text', { docs: 100, dfs: [50, 3] }],
      ['caption', { docs: 10, dfs: [] }],
    ]);
    expect([...commonOnlyKinds(kinds)]).toEqual(['metadata']);
    // Exactly a quarter is not common.
    expect([...commonOnlyKinds(new Map([...kinds, ['metadata', { docs: 100, dfs: [50, 25] }]]))]).toEqual([]);
    // No informative kind: nothing is left out.
    expect([...commonOnlyKinds(new Map([...kinds, ['text', { docs: 100, dfs: [50, 30] }]]))]).toEqual([]);
    expect([...commonOnlyKinds(new Map())]).toEqual([]);
  });
});

describe('who asks for it', () => {
  it('the question pipeline leaves common-only kinds out; the flat search keeps every kind', async () => {
    const gm = await openGraphmemix({ db: ':memory:' });
    try {
      await gm.addMemories(
        'chat',
        Array.from({ length: 40 }, (_, i) => ({
          id: `t${i}`,
          sessionId: 's1',
          role: i % 2 ? 'Maya' : 'Theo',
          speaker: i % 2 ? 'Maya' : 'Theo',
          timestamp: '2024-06-17T18:00:00Z',
          text: i === 7 ? 'the zebra at the zoo' : `hello number ${i}`,
        })),
      );
      const asked: (boolean | undefined)[] = [];
      const search = gm.store.searchLexical.bind(gm.store);
      gm.store.searchLexical = (contextId: string, query: string, options: LexicalSearchOptions) => {
        asked.push(options.skipCommonOnlyKinds);
        return search(contextId, query, options);
      };
      const result = await gm.retrieve('chat', 'when did Maya see the zebra?');
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.every((skip) => skip === true)).toBe(true);
      expect(result.evidence.map((e) => e.memoryId)).toContain('t7');
      asked.length = 0;
      const flat = await gm.searchMemories('chat', 'Maya', { k: 5 });
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.every((skip) => skip === undefined)).toBe(true);
      expect(flat.hits.length).toBe(5);
    } finally {
      await gm.close();
    }
  });
});
