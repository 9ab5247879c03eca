import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { createAnchorNoveltyEdgeVerifier } from '../../src/verify/anchor-novelty-edge-verifier.ts';
import { parseNodeVerdict } from '../../src/verify/node-verifier-protocol.ts';

const valid = new Set(['C00', 'C01', 'C02']);

describe('parseNodeVerdict', () => {
  it('reads scores by alias, accepting fenced JSON and numeric strings', () => {
    const parsed = parseNodeVerdict(
      '```json\n{"selected":[{"id":"C01","score":4},{"id":"C02","score":"2.5"}]}\n```',
      valid,
    );
    expect(parsed.ok && [...parsed.value]).toEqual([
      ['C01', 4],
      ['C02', 2.5],
    ]);
  });
  it('rejects unknown ids, duplicates, out-of-range scores and a missing array', () => {
    expect(parseNodeVerdict('{"selected":[{"id":"C09","score":1}]}', valid).ok).toBe(false);
    expect(parseNodeVerdict('{"selected":[{"id":"C01","score":1},{"id":"C01","score":2}]}', valid).ok).toBe(
      false,
    );
    expect(parseNodeVerdict('{"selected":[{"id":"C01","score":7}]}', valid).ok).toBe(false);
    expect(parseNodeVerdict('{"selected":[{"id":"C01","score":-1}]}', valid).ok).toBe(false);
    expect(parseNodeVerdict('{"picked":[]}', valid).ok).toBe(false);
  });
});

describe('offline verifiers', () => {
  it('anchor-novelty: near-duplicate -> redundant; differing dates -> conflict, with an update cue -> clarification', async () => {
    const rec = (id: string, text: string): MemoryRecord => ({
      id,
      contextId: 'c',
      kind: 'email',
      sequence: 1,
      text,
      assets: [],
    });
    const anchor = {
      memoryId: 'n',
      alias: 'C00',
      record: rec('n', 'The grant deadline is March 1 at the council office.'),
      retrievalScore: 0.5,
      isAnchor: true,
    };
    const cand = (id: string, text: string, alias: string) => ({
      candidate: { memoryId: id, alias, record: rec(id, text), retrievalScore: 0.4, isAnchor: false },
      relations: [{ anchorId: 'n', relationTypes: ['same_record' as const] }],
    });
    const result = await createAnchorNoveltyEdgeVerifier().verify({
      question: { prompt: 'When is the grant deadline?', imageCaptions: [] },
      anchors: [anchor],
      candidates: [
        cand('dup', 'The grant deadline is March 1 at the council office!', 'C01'),
        cand('other', 'The grant deadline is March 9 at the council office.', 'C02'),
        cand('upd', 'Update: the grant deadline was moved to March 15 at the council office.', 'C03'),
      ],
    });
    if (!result.ok) throw new Error(result.error);
    const byId = new Map(result.judgements.map((j) => [j.candidateId, j]));
    expect(byId.get('dup')).toMatchObject({ role: 'redundant', kept: false });
    expect(byId.get('other')).toMatchObject({ role: 'conflict', kept: false });
    expect(byId.get('upd')).toMatchObject({ role: 'clarification', kept: true, anchorId: 'n' });
  });
});
