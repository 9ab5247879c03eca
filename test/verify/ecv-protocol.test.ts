import { describe, expect, it } from 'vitest';
import type { MemoryRecord } from '../../src/types/memory-record.ts';
import { normalizeJudgement, parseEcvVerdict } from '../../src/verify/ecv-protocol.ts';
import type { EdgeVerifierInput } from '../../src/verify/edge-verifier-spec.ts';

const eligible = new Set(['A']);
const raw = (
  anchorId: string | null,
  incrementalSupport: number,
  role: Parameters<typeof normalizeJudgement>[0]['role'],
) => ({
  candidateId: 'X',
  anchorId,
  incrementalSupport,
  role,
});

describe('ECV normalisation (method notes 5, first matching rule only)', () => {
  it('rule 1: ineligible anchor -> cleared, score 0, irrelevant', () => {
    expect(normalizeJudgement(raw('B', 4, 'new_fact'), eligible)).toEqual({
      candidateId: 'X',
      anchorId: null,
      incrementalSupport: 0,
      role: 'irrelevant',
      kept: false,
    });
  });
  it('rule 2: null anchor with a score or a role -> score 0, irrelevant', () => {
    expect(normalizeJudgement(raw(null, 3, 'irrelevant'), eligible)).toMatchObject({
      incrementalSupport: 0,
      role: 'irrelevant',
      kept: false,
    });
    expect(normalizeJudgement(raw(null, 0, 'redundant'), eligible)).toMatchObject({
      incrementalSupport: 0,
      role: 'irrelevant',
      kept: false,
    });
  });
  it('rule 3: positive role with score 0 -> irrelevant', () => {
    expect(normalizeJudgement(raw('A', 0, 'corroboration'), eligible)).toMatchObject({
      anchorId: 'A',
      role: 'irrelevant',
      kept: false,
    });
  });
  it('rule 4: non-positive role with a score -> score 0, role kept', () => {
    expect(normalizeJudgement(raw('A', 4, 'conflict'), eligible)).toMatchObject({
      anchorId: 'A',
      incrementalSupport: 0,
      role: 'conflict',
      kept: false,
    });
  });
  it('keeps a positive role with a positive score', () => {
    expect(normalizeJudgement(raw('A', 2.5, 'clarification'), eligible)).toEqual({
      candidateId: 'X',
      anchorId: 'A',
      incrementalSupport: 2.5,
      role: 'clarification',
      kept: true,
    });
  });
});

describe('parseEcvVerdict', () => {
  const record = (id: string): MemoryRecord => ({
    id,
    contextId: 'c',
    kind: 'note',
    sequence: 1,
    text: id,
    assets: [],
  });
  const candidate = (id: string, alias: string, isAnchor: boolean) => ({
    memoryId: id,
    alias,
    record: record(id),
    retrievalScore: 0.5,
    isAnchor,
  });
  const input: EdgeVerifierInput = {
    question: { prompt: 'q', imageCaptions: [] },
    anchors: [candidate('a', 'C00', true)],
    candidates: [
      {
        candidate: candidate('x', 'C01', false),
        relations: [{ anchorId: 'a', relationTypes: ['same_round'] }],
      },
      {
        candidate: candidate('y', 'C02', false),
        relations: [{ anchorId: 'a', relationTypes: ['consecutive_turn'] }],
      },
    ],
  };
  const row = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    direct_support: 3,
    best_anchor_id: 'C00',
    incremental_support: 4,
    role: 'new_fact',
    ...extra,
  });

  it('maps aliases to ids and ignores unknown candidate ids', () => {
    const parsed = parseEcvVerdict(
      JSON.stringify({ candidates: [row('C01'), row('C02', { role: 'redundant' }), row('C99')] }),
      input,
    );
    expect(parsed).toEqual({
      ok: true,
      value: [
        { candidateId: 'x', anchorId: 'a', incrementalSupport: 4, role: 'new_fact' },
        { candidateId: 'y', anchorId: 'a', incrementalSupport: 4, role: 'redundant' },
      ],
    });
  });
  it('rejects incomplete coverage, duplicates, bad roles and out-of-range scores', () => {
    expect(parseEcvVerdict(JSON.stringify({ candidates: [row('C01')] }), input).ok).toBe(false);
    expect(
      parseEcvVerdict(JSON.stringify({ candidates: [row('C01'), row('C01'), row('C02')] }), input).ok,
    ).toBe(false);
    expect(
      parseEcvVerdict(JSON.stringify({ candidates: [row('C01', { role: 'great' }), row('C02')] }), input).ok,
    ).toBe(false);
    expect(
      parseEcvVerdict(
        JSON.stringify({ candidates: [row('C01', { incremental_support: 6 }), row('C02')] }),
        input,
      ).ok,
    ).toBe(false);
    expect(parseEcvVerdict('nonsense', input).ok).toBe(false);
  });
  it('keeps an unknown anchor alias so that rule 1 clears it', () => {
    const parsed = parseEcvVerdict(
      JSON.stringify({ candidates: [row('C01', { best_anchor_id: 'C42' }), row('C02')] }),
      input,
    );
    if (!parsed.ok) throw new Error(parsed.error);
    expect(normalizeJudgement(parsed.value[0]!, new Set(['a']))).toMatchObject({
      anchorId: null,
      role: 'irrelevant',
      kept: false,
    });
  });
});
