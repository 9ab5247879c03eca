import { describe, expect, it } from 'vitest';
import type { CandidateGraph } from '../../src/core/candidate-graph.ts';
import { fitRefinementKappa, type KappaFitQuestion } from '../../src/core/fit-refinement-kappa.ts';

const solver = { k: 3, lambda: 0.1, kappaProposal: 0.2 };

/** Isolated memories (no edges) with these prizes; `gold` names the gold ones. */
function question(prizes: Record<string, number>, gold: string[], goldCount = gold.length): KappaFitQuestion {
  const graph: CandidateGraph = {
    nodes: Object.entries(prizes).map(([id, prize], position) => ({ id, position, prize })),
    edges: [],
  };
  return { graph, gold: new Set(gold), goldCount };
}

describe('fitRefinementKappa', () => {
  it('replays the solver per kappa: an isolated gold memory at p = 0.05 is kept only below 0.05', () => {
    // The refinement drops an isolated memory with p < kappa; the proposal (K = 3) holds all three.
    const set = [question({ a: 0.9, g: 0.05, x: 0.03 }, ['a', 'g'])];
    const fit = fitRefinementKappa([set], { grid: [0, 0.04, 0.08], reference: 0.12, minGain: 0.005, solver });
    expect(fit.recall).toEqual([
      { kappa: 0, recall: 1 },
      { kappa: 0.04, recall: 1 },
      { kappa: 0.08, recall: 0.5 },
      { kappa: 0.12, recall: 0.5 },
    ]);
    // 0 and 0.04 tie: the larger kappa (the smaller packet) wins; it drops x (p 0.03), which is not gold.
    expect(fit.kappa).toBe(0.04);
    expect(fit.questions).toBe(1);
  });

  it('keeps the reference unless the best value beats it by minGain', () => {
    // Gold outside the pool counts in the denominator: finding g adds 1/40 = 2.5 points.
    const set = [question({ a: 0.9, g: 0.05 }, ['a', 'g'], 40)];
    const strict = fitRefinementKappa([set], { grid: [0.04], reference: 0.12, minGain: 0.03, solver });
    expect(strict.recall.map((r) => r.recall)).toEqual([2 / 40, 1 / 40]);
    expect(strict.kappa).toBe(0.12);
    const loose = fitRefinementKappa([set], { grid: [0.04], reference: 0.12, minGain: 0.02, solver });
    expect(loose.kappa).toBe(0.04);
  });

  it('weighs each set the same, whatever its size', () => {
    // Set A (1 question) gains 0.5 at kappa 0.04; set B (3 questions) loses nothing: mean gain 0.25.
    const a = [question({ a: 0.9, g: 0.05 }, ['a', 'g'])];
    const b = [1, 2, 3].map(() => question({ a: 0.9, x: 0.05 }, ['a']));
    const fit = fitRefinementKappa([a, b], { grid: [0.04], reference: 0.12, minGain: 0, solver });
    expect(fit.recall).toEqual([
      { kappa: 0.04, recall: 1 },
      { kappa: 0.12, recall: 0.75 },
    ]);
    expect(fit.questions).toBe(4);
  });

  it('refuses no questions and negative values', () => {
    const options = { grid: [0], reference: 0.12, minGain: 0, solver };
    expect(() => fitRefinementKappa([[]], options)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
    const set = [question({ a: 0.9 }, ['a'])];
    expect(() => fitRefinementKappa([set], { ...options, grid: [-0.1] })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });
});
