import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { isReplyTurn } from '../../src/verify/reply-turn.ts';

const turn = (id: string, sequence: number, extra: Partial<MemoryRecord>): MemoryRecord => ({
  id,
  contextId: 'c',
  kind: 'message',
  sequence,
  sessionId: 's1',
  text: id,
  assets: [],
  ...extra,
});

describe('isReplyTurn (speaker alternation in a two-person chat)', () => {
  const adjacent = ['consecutive_turn'];
  it('is the next message of the session by the other participant (speaker, else role)', () => {
    const ana = turn('a', 4, { speaker: 'Ana' });
    expect(isReplyTurn(ana, turn('b', 5, { speaker: 'Ben' }), adjacent)).toBe(true);
    expect(isReplyTurn(ana, turn('b', 5, { speaker: ' ana ' }), adjacent)).toBe(false); // same person
    expect(isReplyTurn(ana, turn('b', 3, { speaker: 'Ben' }), adjacent)).toBe(false); // the message before
    expect(isReplyTurn(turn('u', 1, { role: 'user' }), turn('r', 2, { role: 'assistant' }), adjacent)).toBe(
      true,
    );
  });

  it('needs the schema adjacency, one session and a known author on both sides', () => {
    const ana = turn('a', 4, { speaker: 'Ana' });
    const ben = turn('b', 5, { speaker: 'Ben' });
    expect(isReplyTurn(ana, ben, ['semantic_knn'])).toBe(false);
    expect(isReplyTurn(ana, { ...ben, sessionId: 's2' }, adjacent)).toBe(false);
    const { sessionId: _a, ...anaAlone } = ana;
    const { sessionId: _b, ...benAlone } = ben;
    expect(isReplyTurn(anaAlone, benAlone, adjacent)).toBe(false);
    expect(isReplyTurn(ana, turn('b', 5, {}), adjacent)).toBe(false);
  });
});
