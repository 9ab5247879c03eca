import { describe, expect, it } from 'vitest';
import {
  type CalibrationSample,
  fitCalibration,
  nodePrize,
  sigmoid,
} from '../../src/pipeline/prize-calibration.ts';

/** Deterministic pseudo-random source (no Math.random in tests that must replay). */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('fitCalibration', () => {
  it('recovers the generating parameters from synthetic data', () => {
    const random = lcg(7);
    const truth = { a: 3, b: 0.4, c: -3 };
    const samples: CalibrationSample[] = [];
    for (let i = 0; i < 20000; i++) {
      const s = random();
      const v = Math.floor(random() * 6);
      samples.push({ s, v, gold: random() < sigmoid(truth.a * s + truth.b * v + truth.c) });
    }
    const fit = fitCalibration(samples);
    expect(fit.a).toBeCloseTo(truth.a, 0);
    expect(fit.b).toBeCloseTo(truth.b, 1);
    expect(fit.c).toBeCloseTo(truth.c, 0);
    expect(fit.samples).toBe(20000);
  });

  it('the L2 penalty keeps separable data finite', () => {
    const fit = fitCalibration([
      { s: 0.9, v: 5, gold: true },
      { s: 0.1, v: 0, gold: false },
    ]);
    expect(Number.isFinite(fit.a) && Number.isFinite(fit.b) && Number.isFinite(fit.c)).toBe(true);
    expect(nodePrize(fit, 0.9, 5)).toBeGreaterThan(nodePrize(fit, 0.1, 0));
  });
});
