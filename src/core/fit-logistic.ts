/** One training row: a feature vector and its label. */
export interface LogisticRow {
  x: readonly number[];
  y: boolean;
}

export interface LogisticFit {
  weights: number[];
  bias: number;
  /** Mean log loss of the fitted model on the rows (without the penalty). */
  logLoss: number;
  iterations: number;
}

/**
 * Pointwise logistic regression: minimises mean log loss + (l2 / 2) * |w|^2 (the bias is not penalised) by
 * Newton's method with the exact Hessian (a handful of features: a dense (d+1)^2 system per step). Pure and
 * deterministic. With l2 > 0 the objective is strictly convex in w, so separable data still gives finite
 * weights.
 */
export function fitLogistic(rows: readonly LogisticRow[], l2: number, maxIterations = 100): LogisticFit {
  const d = rows[0]?.x.length ?? 0;
  const size = d + 1;
  let w = new Array<number>(size).fill(0);
  const n = Math.max(1, rows.length);
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    const grad = new Array<number>(size).fill(0);
    const hess = Array.from({ length: size }, () => new Array<number>(size).fill(0));
    for (const row of rows) {
      const p = sigmoidOf(dot(w, row.x));
      const r = p - (row.y ? 1 : 0);
      const q = Math.max(p * (1 - p), 1e-12);
      for (let i = 0; i < size; i++) {
        const xi = i < d ? row.x[i]! : 1;
        grad[i]! += (r * xi) / n;
        for (let j = 0; j < size; j++) hess[i]![j]! += (q * xi * (j < d ? row.x[j]! : 1)) / n;
      }
    }
    for (let i = 0; i < d; i++) {
      grad[i]! += l2 * w[i]!;
      hess[i]![i]! += l2;
    }
    hess[d]![d]! += 1e-9;
    const step = solveLinear(hess, grad);
    w = w.map((value, i) => value - step[i]!);
    if (Math.max(0, ...step.map(Math.abs)) < 1e-10) break;
  }
  let loss = 0;
  for (const row of rows) {
    const p = sigmoidOf(dot(w, row.x));
    loss -= Math.log(Math.max(row.y ? p : 1 - p, 1e-15));
  }
  return { weights: w.slice(0, d), bias: w[d]!, logLoss: loss / n, iterations: iterations + 1 };
}

/** w . (x, 1): the last weight is the bias. */
function dot(w: readonly number[], x: readonly number[]): number {
  let z = w[x.length]!;
  for (let i = 0; i < x.length; i++) z += w[i]! * x[i]!;
  return z;
}

function sigmoidOf(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** Solves H x = g by Gaussian elimination with partial pivoting (a singular system gives a zero step). */
export function solveLinear(h: readonly (readonly number[])[], g: readonly number[]): number[] {
  const size = g.length;
  const m = h.map((row, i) => [...row, g[i]!]);
  for (let col = 0; col < size; col++) {
    let pivot = col;
    for (let row = col + 1; row < size; row++)
      if (Math.abs(m[row]![col]!) > Math.abs(m[pivot]![col]!)) pivot = row;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const p = m[col]![col]!;
    if (Math.abs(p) < 1e-300) return new Array<number>(size).fill(0);
    for (let row = 0; row < size; row++) {
      if (row === col) continue;
      const factor = m[row]![col]! / p;
      if (factor === 0) continue;
      for (let k = col; k <= size; k++) m[row]![k]! -= factor * m[col]![k]!;
    }
  }
  return m.map((row, i) => row[size]! / row[i]!);
}
