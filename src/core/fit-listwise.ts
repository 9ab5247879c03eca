import { solveLinear } from './fit-logistic.ts';

/** One question's pool: a feature row per member and which members are gold. */
export interface ListwiseGroup {
  rows: readonly (readonly number[])[];
  gold: readonly boolean[];
}

export interface ListwiseFit {
  weights: number[];
  /** Mean over groups of the softmax cross-entropy of the gold members (without the penalty). */
  loss: number;
  iterations: number;
}

/**
 * Listwise logistic regression (a conditional logit, one softmax per question): minimises, averaged over the
 * groups that hold gold, -(1/|G|) sum_{g in G} log softmax(w . x)_g, plus (l2 / 2) |w|^2. It fits the ORDER
 * inside each pool, which is what a top-K selection reads, instead of the absolute rate of gold across pools
 * (a pointwise fit is dominated by the easy negatives deep in every pool). No bias: a softmax ignores it.
 * Newton's method with the exact Hessian and step halving; pure and deterministic.
 */
export function fitListwise(groups: readonly ListwiseGroup[], l2: number, maxIterations = 100): ListwiseFit {
  const used = groups.filter((g) => g.rows.length > 0 && g.gold.some(Boolean));
  const d = used[0]?.rows[0]?.length ?? 0;
  let w = new Array<number>(d).fill(0);
  let current = listwiseLoss(used, w, l2);
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    const grad = new Array<number>(d).fill(0);
    const hess = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const group of used) {
      const p = softmax(group.rows.map((x) => dot(w, x)));
      const goldCount = group.gold.filter(Boolean).length;
      const mean = new Array<number>(d).fill(0);
      group.rows.forEach((x, i) => {
        for (let a = 0; a < d; a++) mean[a]! += p[i]! * x[a]!;
      });
      group.rows.forEach((x, i) => {
        for (let a = 0; a < d; a++) {
          if (group.gold[i]) grad[a]! -= x[a]! / goldCount;
          for (let b = 0; b < d; b++) hess[a]![b]! += p[i]! * x[a]! * x[b]!;
        }
      });
      for (let a = 0; a < d; a++) {
        grad[a]! += mean[a]!;
        for (let b = 0; b < d; b++) hess[a]![b]! -= mean[a]! * mean[b]!;
      }
    }
    const n = Math.max(1, used.length);
    for (let a = 0; a < d; a++) {
      grad[a] = grad[a]! / n + l2 * w[a]!;
      for (let b = 0; b < d; b++) hess[a]![b] = hess[a]![b]! / n + (a === b ? l2 : 0);
    }
    const step = solveLinear(hess, grad);
    let scale = 1;
    let next = w.map((value, i) => value - step[i]!);
    let loss = listwiseLoss(used, next, l2);
    while (loss > current + 1e-12 && scale > 1e-6) {
      scale /= 2;
      next = w.map((value, i) => value - scale * step[i]!);
      loss = listwiseLoss(used, next, l2);
    }
    const moved = Math.max(0, ...step.map((s) => Math.abs(s * scale)));
    w = next;
    current = loss;
    if (moved < 1e-10) break;
  }
  const penalty = (l2 / 2) * w.reduce((sum, x) => sum + x * x, 0);
  return { weights: w, loss: current - penalty, iterations: iterations + 1 };
}

function listwiseLoss(groups: readonly ListwiseGroup[], w: readonly number[], l2: number): number {
  let total = 0;
  for (const group of groups) {
    const z = group.rows.map((x) => dot(w, x));
    const max = Math.max(...z);
    const logSum = max + Math.log(z.reduce((sum, v) => sum + Math.exp(v - max), 0));
    const goldCount = group.gold.filter(Boolean).length;
    z.forEach((v, i) => {
      if (group.gold[i]) total += (logSum - v) / goldCount;
    });
  }
  return total / Math.max(1, groups.length) + (l2 / 2) * w.reduce((sum, x) => sum + x * x, 0);
}

function softmax(z: readonly number[]): number[] {
  const max = Math.max(...z);
  const e = z.map((v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

function dot(w: readonly number[], x: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < x.length; i++) z += w[i]! * x[i]!;
  return z;
}
