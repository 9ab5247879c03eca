import { describe, expect, it } from 'vitest';
import { diffEdgeReplacement, pairKey, streamEdgeReplacement } from '../../src/store/edge-merge.ts';
import type { MemoryEdge, RelationType } from '../../src/types/relation.ts';

const edge = (a: string, b: string, types: RelationType[], similarity?: number): MemoryEdge => ({
  contextId: 'ctx',
  a,
  b,
  types,
  strength: similarity ?? 0.99,
  ...(similarity === undefined ? {} : { similarity }),
});

describe('streamEdgeReplacement', () => {
  // Stored edges without any replaced type: the streaming path must give the diff's upserts, in order.
  const stored = [edge('a', 'b', ['same_round']), edge('c', 'd', ['consecutive_turn'])];
  const lookup = (a: string, b: string) => stored.find((e) => pairKey(e.a, e.b) === pairKey(a, b));

  it('yields exactly the diff upserts, merged with the stored edge of each pair', () => {
    const edges = [
      edge('a', 'b', ['semantic_knn'], 0.4),
      edge('a', 'c', ['semantic_knn'], 0.3),
      edge('d', 'c', ['semantic_knn'], 0.2),
    ];
    // d-c normalises to c-d, which sorts after a-c: still strictly increasing.
    const streamed = streamEdgeReplacement('ctx', ['semantic_knn'], edges, lookup);
    expect(streamed).toBeDefined();
    const diff = diffEdgeReplacement('ctx', stored, ['semantic_knn'], edges);
    expect(diff.deletes).toEqual([]);
    expect([...streamed!]).toEqual(diff.upserts);
    expect(diff.upserts[0]).toEqual({
      contextId: 'ctx',
      a: 'a',
      b: 'b',
      types: ['same_round', 'semantic_knn'],
      strength: 0.99,
      similarity: 0.4,
    });
  });

  it('leaves repeated or unsorted pairs to the diff (undefined)', () => {
    const repeated = [edge('a', 'b', ['same_round']), edge('b', 'a', ['consecutive_turn'])];
    const unsorted = [edge('b', 'c', ['same_round']), edge('a', 'c', ['same_round'])];
    for (const edges of [repeated, unsorted]) {
      expect(streamEdgeReplacement('ctx', ['same_round', 'consecutive_turn'], edges, lookup)).toBeUndefined();
    }
  });

  it('rejects a bad edge anywhere before yielding any (nothing is written)', () => {
    const edges = [edge('a', 'b', ['same_round']), edge('c', 'c', ['same_round'])];
    expect(() => streamEdgeReplacement('ctx', ['same_round'], edges, lookup)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    const foreign = [edge('a', 'b', ['same_round']), edge('b', 'c', ['event_bridge'])];
    expect(() => streamEdgeReplacement('ctx', ['same_round'], foreign, lookup)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });
});
