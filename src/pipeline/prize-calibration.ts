import type { EmbeddingModel } from '../providers/model-spec.ts';
import { retrieverName } from '../retrieval/multi-view-retriever.ts';
import type { ArchiveStore } from '../store/archive-store-spec.ts';
import defaults from './default-calibration.json' with { type: 'json' };

/** p_i = sigmoid(a*s + b*v + c) (method notes 6). */
export interface PrizeCalibration {
  a: number;
  b: number;
  c: number;
}

/** Where the calibration in use came from: the store (fitted by `graphmemix calibrate`), shipped, or paper. */
export interface ResolvedCalibration extends PrizeCalibration {
  key: string;
  source: 'store' | 'default' | 'paper';
}

/** The authors' values for their cosine encoder: last resort for configurations nothing was fitted for. */
export const PAPER_CALIBRATION: PrizeCalibration = { a: 4.054056, b: 0.22538, c: -3.711336 };
/** L2 penalty of the calibration fit (method notes 6). */
export const CALIBRATION_L2 = 0.001;

export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

export function nodePrize(calibration: PrizeCalibration, s: number, v: number): number {
  return sigmoid(calibration.a * s + calibration.b * v + calibration.c);
}

/** The calibration key: retriever configuration + node verifier (+ edge verifier, for the record). */
export function calibrationKey(parts: {
  retriever: string;
  nodeVerifier: string;
  edgeVerifier: string;
}): string {
  return `${parts.retriever}|node=${parts.nodeVerifier}|edge=${parts.edgeVerifier}`;
}

/** The parts of the calibration key of a question's configuration: its retriever and its verifiers. */
export function calibrationParts(
  embedding: EmbeddingModel | undefined,
  verifiers: { node?: { name: string }; edge?: { name: string } },
): { retriever: string; nodeVerifier: string; edgeVerifier: string } {
  return {
    retriever: retrieverName(embedding),
    nodeVerifier: verifiers.node?.name ?? 'none',
    edgeVerifier: verifiers.edge?.name ?? 'none',
  };
}

export function calibrationMetaKey(key: string): string {
  return `calibration:${key}`;
}

interface ShippedCalibrations {
  entries: Record<string, PrizeCalibration & Record<string, unknown>>;
}

/** Store meta first (fitted on this archive's dev questions), then the shipped defaults, then the paper's. */
export async function resolveCalibration(store: ArchiveStore, key: string): Promise<ResolvedCalibration> {
  const stored = await store.getMeta<PrizeCalibration>(calibrationMetaKey(key));
  if (isCalibration(stored)) return { a: stored.a, b: stored.b, c: stored.c, key, source: 'store' };
  const shipped = (defaults as ShippedCalibrations).entries[key];
  if (isCalibration(shipped)) return { a: shipped.a, b: shipped.b, c: shipped.c, key, source: 'default' };
  return { ...PAPER_CALIBRATION, key, source: 'paper' };
}

/** One training row of the calibration fit: a pool candidate's (s, v) and whether it is gold evidence. */
export interface CalibrationSample {
  s: number;
  v: number;
  gold: boolean;
}

export interface CalibrationFit extends PrizeCalibration {
  samples: number;
  positives: number;
  /** Mean log loss of the fitted model on the samples. */
  logLoss: number;
  iterations: number;
}

/**
 * Logistic regression of "is gold" on (s, v) with an intercept, minimising mean log loss +
 * (l2 / 2) * (a^2 + b^2) (the intercept is not penalised), by Newton's method (3 parameters: exact Hessian).
 * Deterministic; throws INVALID_INPUT-free: with no positives or no negatives it still returns a finite fit
 * thanks to the penalty, but callers should report that the data was degenerate.
 */
export function fitCalibration(samples: readonly CalibrationSample[], l2 = CALIBRATION_L2): CalibrationFit {
  let w = [0, 0, 0];
  const n = Math.max(1, samples.length);
  let iterations = 0;
  for (; iterations < 100; iterations++) {
    const grad = [0, 0, 0];
    const hess = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    for (const sample of samples) {
      const x = [sample.s, sample.v, 1];
      const p = sigmoid(w[0]! * x[0]! + w[1]! * x[1]! + w[2]!);
      const r = p - (sample.gold ? 1 : 0);
      const q = Math.max(p * (1 - p), 1e-12);
      for (let i = 0; i < 3; i++) {
        grad[i]! += (r * x[i]!) / n;
        for (let j = 0; j < 3; j++) hess[i]![j]! += (q * x[i]! * x[j]!) / n;
      }
    }
    for (let i = 0; i < 2; i++) {
      grad[i]! += l2 * w[i]!;
      hess[i]![i]! += l2;
    }
    hess[2]![2]! += 1e-9;
    const step = solve3(hess, grad);
    w = w.map((value, i) => value - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-10) break;
  }
  let loss = 0;
  for (const sample of samples) {
    const p = sigmoid(w[0]! * sample.s + w[1]! * sample.v + w[2]!);
    loss -= Math.log(Math.max(sample.gold ? p : 1 - p, 1e-15));
  }
  return {
    a: w[0]!,
    b: w[1]!,
    c: w[2]!,
    samples: samples.length,
    positives: samples.filter((s) => s.gold).length,
    logLoss: loss / n,
    iterations: iterations + 1,
  };
}

function isCalibration(value: unknown): value is PrizeCalibration {
  if (typeof value !== 'object' || value === null) return false;
  const { a, b, c } = value as Record<string, unknown>;
  return [a, b, c].every((x) => typeof x === 'number' && Number.isFinite(x));
}

/** Solves the 3x3 system H x = g by Gaussian elimination with partial pivoting. */
function solve3(h: number[][], g: number[]): number[] {
  const m = h.map((row, i) => [...row, g[i]!]);
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let row = col + 1; row < 3; row++)
      if (Math.abs(m[row]![col]!) > Math.abs(m[pivot]![col]!)) pivot = row;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const p = m[col]![col]!;
    if (Math.abs(p) < 1e-300) return [0, 0, 0];
    for (let row = 0; row < 3; row++) {
      if (row === col) continue;
      const factor = m[row]![col]! / p;
      for (let k = col; k < 4; k++) m[row]![k]! -= factor * m[col]![k]!;
    }
  }
  return [0, 1, 2].map((i) => m[i]![3]! / m[i]![i]!);
}
