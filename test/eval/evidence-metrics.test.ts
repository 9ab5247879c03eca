import { describe, expect, it } from 'vitest';
import { aggregateMetrics, evidenceMetrics } from '../../src/eval/evidence-metrics.ts';

describe('evidence metrics', () => {
  it('computes recall, hit and all-gold per question', () => {
    expect(evidenceMetrics(['a', 'b', 'x'], ['a', 'b', 'c', 'd'])).toEqual({
      recall: 0.5,
      hit: 1,
      allGold: 0,
      selected: 3,
    });
    expect(evidenceMetrics(['a', 'b'], ['b', 'a'])).toEqual({ recall: 1, hit: 1, allGold: 1, selected: 2 });
    expect(evidenceMetrics(['x'], ['a'])).toEqual({ recall: 0, hit: 0, allGold: 0, selected: 1 });
  });

  it('skips questions without gold and ignores duplicate ids', () => {
    expect(evidenceMetrics(['a'], [])).toBeUndefined();
    expect(evidenceMetrics(['a', 'a'], ['a', 'a', 'b'])).toEqual({
      recall: 0.5,
      hit: 1,
      allGold: 0,
      selected: 1,
    });
  });

  it('averages overall and by type', () => {
    const rows = [
      { type: 'FR', metrics: evidenceMetrics(['a'], ['a'])! },
      { type: 'FR', metrics: evidenceMetrics(['x'], ['a'])! },
      { type: 'TR', metrics: evidenceMetrics(['a', 'b'], ['a', 'c'])! },
    ];
    const summary = aggregateMetrics(rows);
    expect(summary.recall).toBeCloseTo((1 + 0 + 0.5) / 3, 12);
    expect(summary.hit).toBeCloseTo(2 / 3, 12);
    expect(summary.all_gold).toBeCloseTo(1 / 3, 12);
    expect(summary.mean_selected).toBeCloseTo(4 / 3, 12);
    expect(summary.by_type.FR).toMatchObject({ recall: 0.5, questions: 2 });
    expect(summary.by_type.TR).toMatchObject({ recall: 0.5, hit: 1, questions: 1 });
    expect(aggregateMetrics([]).recall).toBe(0);
  });
});
