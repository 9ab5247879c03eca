import { describe, expect, it } from 'vitest';
import {
  edgeReliabilityRows,
  fitEdgeReliability,
  isCrossUnitEdge,
  withCalibratedEdges,
} from '../../src/pipeline/edge-reliability.ts';
import type { JudgedEdge } from '../../src/pipeline/retrieval-result.ts';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import type { RelationType } from '../../src/types/relation.ts';

/** Turns of one two-person session, in order: a (Ana), then its reply b (Ben), then c (Ana)... */
function chat(ids: string[]): Map<string, MemoryRecord> {
  return new Map(
    ids.map((id, i) => [
      id,
      {
        id,
        contextId: 'c',
        kind: 'message',
        sequence: i,
        sessionId: 's1',
        speaker: i % 2 === 0 ? 'Ana' : 'Ben',
        text: id,
        assets: [],
      },
    ]),
  );
}

function edge(a: string, b: string, types: RelationType[], support: number, kept = true): JudgedEdge {
  const weight = kept ? (0.99 * support) / 5 : 0;
  return {
    a,
    b,
    weight,
    cost: -Math.log(Math.max(weight, 1e-6)),
    relationTypes: types,
    role: kept ? 'new_fact' : 'irrelevant',
    incrementalSupport: support,
    kept,
  };
}

describe('edge reliability (offline ECV cross-unit edges)', () => {
  it('takes only kept cross-unit edges whose anchor is gold as fitting rows', () => {
    const edges = [
      edge('g1', 'g2', ['consecutive_turn'], 1),
      edge('g1', 'x', ['consecutive_turn'], 2),
      edge('x', 'g2', ['consecutive_turn'], 3), // anchor not gold: says nothing about P(b | a gold)
      edge('g1', 'y', ['same_round', 'consecutive_turn'], 5), // same unit: the paper's flat mapping stays
      edge('g1', 'z', ['consecutive_turn'], 0, false), // rejected by the ECV
    ];
    expect(isCrossUnitEdge(edges[0]!)).toBe(true);
    expect(isCrossUnitEdge(edges[3]!)).toBe(false);
    // g1 (Ana) is answered by g2 (Ben); x comes before g1.
    const records = chat(['x', 'g1', 'g2', 'y', 'z']);
    expect(edgeReliabilityRows(edges, new Set(['g1', 'g2']), 'turns', records)).toEqual([
      { shape: 'turns', incrementalSupport: 1, reply: true, candidateGold: true },
      { shape: 'turns', incrementalSupport: 2, reply: false, candidateGold: false },
    ]);
  });

  it('fits w = sigmoid(a s_inc + c) per shape and falls back to the other shape', () => {
    // turns: 3 of 4 candidates at s_inc 1 are gold; at s_inc 3 all but one of 8.
    const rows = [
      ...[true, true, true, false].map((g) => ({
        shape: 'turns' as const,
        incrementalSupport: 1,
        reply: false,
        candidateGold: g,
      })),
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({
        shape: 'turns' as const,
        incrementalSupport: 3,
        reply: false,
        candidateGold: i !== 8,
      })),
    ];
    const fit = fitEdgeReliability(rows)!;
    const w = (s: number) => 1 / (1 + Math.exp(-(fit.turns.a * s + fit.turns.c)));
    // A (nearly) unpenalised logistic regression on two support levels reproduces their gold rates.
    expect(w(1)).toBeCloseTo(0.75, 3);
    expect(w(3)).toBeCloseTo(7 / 8, 3);
    expect(fit.turns.reply).toBeCloseTo(0, 6); // no reply among the rows: nothing learned about replies
    expect(fit.units).toEqual(fit.turns); // no units rows: the other shape's fit
    expect(fit.samples).toEqual({ units: 0, turns: 12 });
    // One outcome only: nothing to fit.
    expect(fitEdgeReliability(rows.slice(0, 3))).toBeUndefined();
    expect(fitEdgeReliability([])).toBeUndefined();
  });

  it('learns that a reply is more reliable than the message before at the same s_inc', () => {
    // At s_inc 0.1: 8 of 10 replies are gold, 4 of 10 preceding turns are.
    const rows = [true, false].flatMap((reply) =>
      [...Array(10).keys()].map((i) => ({
        shape: 'turns' as const,
        incrementalSupport: 0.1,
        reply,
        candidateGold: i < (reply ? 8 : 4),
      })),
    );
    const fit = fitEdgeReliability(rows)!;
    const w = (reply: boolean) =>
      1 / (1 + Math.exp(-(fit.turns.a * 0.1 + (reply ? fit.turns.reply! : 0) + fit.turns.c)));
    expect(w(true)).toBeCloseTo(0.8, 2);
    expect(w(false)).toBeCloseTo(0.4, 2);
  });

  it('re-weights kept cross-unit edges only, capped at 0.99, with the matching cost', () => {
    const edges = [
      edge('a', 'b', ['consecutive_turn'], 1),
      edge('a', 'c', ['same_round'], 5),
      edge('a', 'd', ['consecutive_turn'], 0, false),
      edge('a', 'e', ['event_bridge'], 5),
    ];
    const records = chat(['a', 'b', 'c', 'd', 'e']); // b is a's reply
    const [cross, unit, rejected, strong] = withCalibratedEdges(edges, { a: 1, c: 0 }, records);
    expect(cross!.weight).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
    // With a reply coefficient, only the reply edge moves.
    const [reply, , , bridge] = withCalibratedEdges(edges, { a: 1, reply: -1, c: 0 }, records);
    expect(reply!.weight).toBeCloseTo(0.5, 12);
    expect(bridge!.weight).toBe(0.99);
    // Records unknown: no alternation can be read, the reply coefficient is not applied.
    expect(withCalibratedEdges(edges, { a: 1, reply: -1, c: 0 }, new Map())[0]!.weight).toBeCloseTo(
      cross!.weight,
      12,
    );
    expect(cross!.cost).toBeCloseTo(-Math.log(cross!.weight), 12);
    expect(unit).toEqual(edges[1]);
    expect(rejected).toEqual(edges[2]);
    expect(strong!.weight).toBe(0.99);
  });
});
