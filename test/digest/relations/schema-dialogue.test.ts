import { describe, expect, it } from 'vitest';
import { consecutiveTurnPairs } from '../../../src/digest/relations/consecutive-turn.ts';
import { MAX_ROUND_CLIQUE, sameRoundPairs } from '../../../src/digest/relations/same-round.ts';
import { makeRecord, pairKeys } from './make-record.ts';

describe('same_round', () => {
  it('links every pair of one native round and nothing across rounds', () => {
    const records = [
      makeRecord('u1', { roundId: 'D1:1' }),
      makeRecord('a1', { roundId: 'D1:1' }),
      makeRecord('u2', { roundId: 'D1:2' }),
      makeRecord('a2', { roundId: 'D1:2' }),
      makeRecord('x2', { roundId: 'D1:2' }),
      makeRecord('free'),
    ];
    expect(pairKeys(sameRoundPairs(records))).toEqual(['a1|u1', 'a2|u2', 'a2|x2', 'u2|x2']);
  });

  it('chains an oversized round instead of making it quadratic', () => {
    const members = Array.from({ length: MAX_ROUND_CLIQUE + 1 }, (_, i) =>
      makeRecord(`m${String(i).padStart(3, '0')}`, { roundId: 'bad', sequence: i }),
    );
    const pairs = sameRoundPairs(members);
    expect(pairs).toHaveLength(MAX_ROUND_CLIQUE);
    expect(pairKeys(pairs)[0]).toBe('m000|m001');
  });
});

describe('consecutive_turn', () => {
  it('links adjacent messages by sequence within a session, never across sessions', () => {
    const records = [
      makeRecord('s1-c', { sessionId: 's1', sequence: 3 }),
      makeRecord('s1-a', { sessionId: 's1', sequence: 1 }),
      makeRecord('s2-a', { sessionId: 's2', sequence: 4 }),
      makeRecord('s1-b', { sessionId: 's1', sequence: 2 }),
      makeRecord('s2-b', { sessionId: 's2', sequence: 5 }),
      makeRecord('loose-1', { sequence: 6 }),
      makeRecord('loose-2', { sequence: 7 }),
    ];
    expect(pairKeys(consecutiveTurnPairs(records))).toEqual(['s1-a|s1-b', 's1-b|s1-c', 's2-a|s2-b']);
  });

  it('skips non-message records so the messages around them stay adjacent', () => {
    const records = [
      makeRecord('m1', { sessionId: 's', sequence: 1 }),
      makeRecord('p', { sessionId: 's', sequence: 2, kind: 'photo' }),
      makeRecord('m2', { sessionId: 's', sequence: 3 }),
    ];
    expect(pairKeys(consecutiveTurnPairs(records))).toEqual(['m1|m2']);
  });

  it('gives turns minus sessions pairs (the Mem-Gallery check: 7,924 turns in 240 sessions -> 7,684)', () => {
    const records = [];
    let sequence = 0;
    for (let session = 0; session < 240; session++) {
      const turns = 33 + (session < 4 ? 1 : 0);
      for (let t = 0; t < turns; t++)
        records.push(makeRecord(`s${session}t${t}`, { sessionId: `s${session}`, sequence: sequence++ }));
    }
    expect(records).toHaveLength(7924);
    expect(consecutiveTurnPairs(records)).toHaveLength(7684);
  });
});
