import { mulberry32 } from './seeded-random.ts';
import { type KnnPair, rankableScore, TopKLists } from './top-k-lists.ts';

export interface DenseKnnOptions {
  /** Neighbours per item (method notes: k = 8). */
  k?: number;
  /** Up to this many items the search is exact (all pairs); above it, random-hyperplane LSH. Default 2048. */
  exactLimit?: number;
  /** LSH tables (more = higher recall, more work). Default 10. */
  tables?: number;
  /** Hyperplanes per table: bucket count 2^bits. Default: about log2(n / 16), clamped to 8..16. */
  bits?: number;
  /** Seed of the hyperplanes, so a rebuild gives the same edges. */
  seed?: number;
}

export interface DenseKnnResult {
  pairs: KnnPair[];
  lists: TopKLists;
  method: 'exact' | 'lsh';
  scoredPairs: number;
}

/** Inside one LSH bucket larger than this, each member is compared with the next MAX_BUCKET_SPAN members. */
const MAX_BUCKET_SPAN = 128;

/**
 * Mutual kNN over dense vectors (cosine; vectors are L2-normalised here, zero vectors have no neighbours).
 * Exact up to `exactLimit` items. Above it, candidates come from random-hyperplane LSH (SimHash): items
 * sharing a bucket in any of `tables` tables are scored with their exact cosine; a bucket larger than
 * 2 * MAX_BUCKET_SPAN only compares members within MAX_BUCKET_SPAN positions of each other (index order).
 * That bounds the work at about n * tables * (bucket size) instead of n^2 / 2. Deterministic (seeded).
 */
export function denseMutualKnn(
  vectors: readonly Float32Array[],
  options: DenseKnnOptions = {},
): DenseKnnResult {
  const n = vectors.length;
  const k = options.k ?? 8;
  const unit = vectors.map(normalized);
  const lists = new TopKLists(n, k);
  let scoredPairs = 0;
  const score = (i: number, j: number): void => {
    const value = rankableScore(dot(unit[i]!, unit[j]!));
    lists.offer(i, j, value);
    lists.offer(j, i, value);
    scoredPairs++;
  };

  if (n <= (options.exactLimit ?? 2048)) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) score(i, j);
    return { pairs: lists.mutualPairs(), lists, method: 'exact', scoredPairs };
  }

  const dims = unit.find((vector) => vector.length > 0)?.length ?? 0;
  const bits = options.bits ?? Math.min(16, Math.max(8, Math.round(Math.log2(n / 16))));
  const tables = options.tables ?? 10;
  const random = gaussian(options.seed ?? 0x5eed);
  const stamp = new Int32Array(n).fill(-1);
  const bucketsPerTable: Array<Map<number, number[]>> = [];
  const codes: Int32Array[] = [];
  for (let table = 0; table < tables; table++) {
    const planes = Array.from({ length: bits }, () => Float32Array.from({ length: dims }, random));
    const code = new Int32Array(n);
    const buckets = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      let value = 0;
      for (let b = 0; b < bits; b++) if (dot(unit[i]!, planes[b]!) >= 0) value |= 1 << b;
      code[i] = value;
      const bucket = buckets.get(value);
      if (bucket) bucket.push(i);
      else buckets.set(value, [i]);
    }
    codes.push(code);
    bucketsPerTable.push(buckets);
  }
  const positions = bucketsPerTable.map((buckets) => {
    const position = new Int32Array(n);
    for (const members of buckets.values()) {
      for (let at = 0; at < members.length; at++) position[members[at]!] = at;
    }
    return position;
  });
  for (let i = 0; i < n; i++) {
    if (unit[i]!.length === 0) continue;
    for (let table = 0; table < tables; table++) {
      const members = bucketsPerTable[table]!.get(codes[table]![i]!)!;
      const from = positions[table]![i]! + 1;
      const to =
        members.length > 2 * MAX_BUCKET_SPAN
          ? Math.min(members.length, from + MAX_BUCKET_SPAN)
          : members.length;
      for (let at = from; at < to; at++) {
        const j = members[at]!;
        if (stamp[j] === i) continue;
        stamp[j] = i;
        score(i, j);
      }
    }
  }
  return { pairs: lists.mutualPairs(), lists, method: 'lsh', scoredPairs };
}

function dot(x: Float32Array, y: Float32Array): number {
  const length = Math.min(x.length, y.length);
  let sum = 0;
  for (let d = 0; d < length; d++) sum += x[d]! * y[d]!;
  return sum;
}

function normalized(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (!(norm > 0) || !Number.isFinite(norm)) return new Float32Array(0);
  const scale = 1 / Math.sqrt(norm);
  return vector.map((value) => value * scale);
}

/** Seeded standard normal samples (mulberry32 + Box-Muller): the hyperplanes must not change between runs. */
function gaussian(seed: number): () => number {
  const uniform = mulberry32(seed);
  return () => {
    const u = Math.max(uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}
