import { describe, expect, it } from 'vitest';
import { fitListwise } from '../../src/core/fit-listwise.ts';
import { fitLogistic, solveLinear } from '../../src/core/fit-logistic.ts';

const logit = (p: number) => Math.log(p / (1 - p));

describe('fitLogistic (pointwise, Newton)', () => {
  it('one binary feature, no penalty: bias = logit(rate at x=0), weight = logit(rate at 1) - logit(rate at 0)', () => {
    // x = 0: 1 positive of 4 (rate 1/4); x = 1: 3 positives of 4 (rate 3/4).
    const rows = [
      ...[true, false, false, false].map((y) => ({ x: [0], y })),
      ...[true, true, true, false].map((y) => ({ x: [1], y })),
    ];
    const fit = fitLogistic(rows, 0);
    expect(fit.bias).toBeCloseTo(logit(0.25), 8);
    expect(fit.weights[0]).toBeCloseTo(logit(0.75) - logit(0.25), 8);
    // mean log loss: every row is predicted at its group's rate: -(1/8)(2 ln .25 + 6 ln .75)
    expect(fit.logLoss).toBeCloseTo(-(2 * Math.log(0.25) + 6 * Math.log(0.75)) / 8, 8);
  });

  it('a feature that says nothing gets weight 0; the penalty keeps separable data finite', () => {
    const flat = fitLogistic(
      [
        { x: [1], y: true },
        { x: [1], y: false },
        { x: [0], y: true },
        { x: [0], y: false },
      ],
      0,
    );
    expect(flat.weights[0]).toBeCloseTo(0, 10);
    expect(flat.bias).toBeCloseTo(0, 10);
    const separable = fitLogistic(
      [
        { x: [1], y: true },
        { x: [0], y: false },
      ],
      0.1,
    );
    expect(Number.isFinite(separable.weights[0])).toBe(true);
    expect(separable.weights[0]).toBeGreaterThan(0);
  });

  it('solveLinear solves a 3x3 system', () => {
    const x = solveLinear(
      [
        [2, 1, 0],
        [1, 3, 1],
        [0, 1, 4],
      ],
      [3, 10, 14],
    );
    expect(2 * x[0]! + x[1]!).toBeCloseTo(3, 10);
    expect(x[0]! + 3 * x[1]! + x[2]!).toBeCloseTo(10, 10);
    expect(x[1]! + 4 * x[2]!).toBeCloseTo(14, 10);
  });
});

describe('fitListwise (one softmax per question)', () => {
  it('two members, gold has feature 1: p(gold) = e^w / (e^w + 1); with l2 the optimum solves -(1-p) + l2 w = 0', () => {
    const group = { rows: [[1], [0]], gold: [true, false] };
    const l2 = 0.5;
    const fit = fitListwise([group], l2);
    const w = fit.weights[0]!;
    const p = Math.exp(w) / (Math.exp(w) + 1);
    expect(-(1 - p) + l2 * w).toBeCloseTo(0, 9);
    expect(fit.loss).toBeCloseTo(-Math.log(p), 9);
  });

  it('without penalty: groups that disagree 1:1 give w = 0, 2:1 give w = ln 2', () => {
    // Group A prefers the member with x=1, group B the one with x=0: the likelihood is maximal at w = 0.
    const a = { rows: [[1], [0]], gold: [true, false] };
    const b = { rows: [[1], [0]], gold: [false, true] };
    expect(fitListwise([a, b], 0).weights[0]).toBeCloseTo(0, 8);
    // Two groups agree, one disagrees: maximise 2 ln s(w) + ln s(-w) -> s(w) = 2/3 -> w = ln 2.
    expect(fitListwise([a, a, b], 0).weights[0]).toBeCloseTo(Math.log(2), 8);
  });

  it('averages the gold members of a group and ignores groups without gold', () => {
    // Both x=1 members gold of three: the loss is minimised as w -> +inf; with l2 it stays finite and positive.
    const group = { rows: [[1], [1], [0]], gold: [true, true, false] };
    const fit = fitListwise([group, { rows: [[5], [0]], gold: [false, false] }], 0.1);
    const w = fit.weights[0]!;
    // Stationarity: d/dw [ -w + ln(2e^w + 1) ] + 0.1 w = -1 + 2e^w/(2e^w+1) + 0.1 w = 0
    expect(-1 + (2 * Math.exp(w)) / (2 * Math.exp(w) + 1) + 0.1 * w).toBeCloseTo(0, 9);
  });
});
