import { describe, expect, it } from 'vitest';
import { StepSizer } from '../../src/store/step-sizer.ts';

describe('StepSizer', () => {
  it('aims the next step at the budget from the last step’s time per item', () => {
    const sizer = new StepSizer(20, 1, 1000, 100);
    expect(sizer.next).toBe(100);
    // 100 items in 50 ms: 0.5 ms each, 40 fit in 20 ms.
    sizer.took(100, 50);
    expect(sizer.next).toBe(40);
    // 40 items in 10 ms: 80 would fit, and 80 is within twice the last size.
    sizer.took(40, 10);
    expect(sizer.next).toBe(80);
  });

  it('grows at most twofold a step, and stays within its bounds', () => {
    const sizer = new StepSizer(20, 4, 250, 16);
    sizer.took(16, 0.1);
    expect(sizer.next).toBe(32);
    sizer.took(32, 0);
    expect(sizer.next).toBe(64);
    for (let i = 0; i < 5; i++) sizer.took(sizer.next, 0.01);
    expect(sizer.next).toBe(250);
    // A very slow step: never below the minimum.
    sizer.took(250, 10_000);
    expect(sizer.next).toBe(4);
  });

  it('ignores steps that did nothing or report no time', () => {
    const sizer = new StepSizer(20, 1, 100, 10);
    sizer.took(0, 5);
    sizer.took(10, Number.NaN);
    expect(sizer.next).toBe(10);
  });

  it('is a fixed size when its bounds are equal', () => {
    const sizer = new StepSizer(20, 7, 7);
    sizer.took(7, 1000);
    expect(sizer.next).toBe(7);
    sizer.took(7, 0.001);
    expect(sizer.next).toBe(7);
  });
});
