import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';

/** Above this many vectors in one (context, space) the search uses the IVF index instead of a full scan. */
export const APPROXIMATE_VECTOR_THRESHOLD = 20_000;

/**
 * Cosine search over the vectors of one (context, embedding space), shared by every store backend.
 *
 * Exact (a full scan of unit-normalised rows) up to APPROXIMATE_VECTOR_THRESHOLD rows. Above it an IVF index:
 * spherical k-means with nlist = ceil(sqrt(n)) centroids, trained for 8 rounds on an evenly spaced sample
 * of up to 32 rows per centroid, initialised from evenly spaced rows (deterministic: the same rows give the
 * same index). A query scans the rows of its nprobe = max(8, ceil(nlist / 8)) closest centroids and ranks
 * them exactly; when that yields fewer than `limit` hits (e.g. a narrow kind filter) it falls back to the
 * exact scan. Scores are always exact cosines; only recall is approximate.
 */
export class VectorIndex {
  readonly dims: number;
  readonly size: number;
  private readonly rows: readonly VectorRow[];
  /** Unit-normalised copy of every row, row-major. */
  private readonly matrix: Float32Array;
  private readonly ivf: Ivf | undefined;
  /** memory id -> its row positions, for searches restricted to a filtered candidate set. */
  private readonly byMemory = new Map<string, number[]>();

  constructor(rows: readonly VectorRow[], options: { approximateAbove?: number } = {}) {
    this.rows = rows;
    rows.forEach((row, index) => {
      const list = this.byMemory.get(row.memoryId);
      if (list) list.push(index);
      else this.byMemory.set(row.memoryId, [index]);
    });
    this.size = rows.length;
    this.dims = rows[0]?.vector.length ?? 0;
    this.matrix = new Float32Array(this.size * this.dims);
    rows.forEach((row, index) => {
      if (row.vector.length !== this.dims) throw dimensionError(this.dims, row.vector.length);
      writeUnit(row.vector, this.matrix, index * this.dims);
    });
    const threshold = options.approximateAbove ?? APPROXIMATE_VECTOR_THRESHOLD;
    this.ivf = this.size > threshold ? buildIvf(this.matrix, this.size, this.dims) : undefined;
  }

  get approximate(): boolean {
    return this.ivf !== undefined;
  }

  search(query: Float32Array, options: VectorSearchOptions): ViewHit[] {
    if (this.size === 0 || options.limit <= 0) return [];
    if (query.length !== this.dims) throw dimensionError(this.dims, query.length);
    const unit = new Float32Array(this.dims);
    writeUnit(query, unit, 0);
    const kinds = options.kinds ? new Set<ViewKind>(options.kinds) : undefined;
    if (options.memoryIds !== undefined) {
      // A filtered question: exact cosines over the candidate set's rows only.
      const positions = [...new Set(options.memoryIds)].flatMap((id) => this.byMemory.get(id) ?? []);
      return this.scan(unit, kinds, options.limit, positions);
    }
    if (this.ivf) {
      const hits = this.scan(unit, kinds, options.limit, probeRows(this.ivf, unit, this.dims));
      if (hits.length >= options.limit) return hits;
    }
    return this.scan(unit, kinds, options.limit, undefined);
  }

  private scan(
    unit: Float32Array,
    kinds: Set<ViewKind> | undefined,
    limit: number,
    candidates: Iterable<number> | undefined,
  ): ViewHit[] {
    const hits: ViewHit[] = [];
    const visit = (index: number): void => {
      const row = this.rows[index]!;
      if (kinds && !kinds.has(row.kind)) return;
      hits.push({
        memoryId: row.memoryId,
        kind: row.kind,
        key: row.key,
        rawScore: dot(unit, this.matrix, index * this.dims, this.dims),
      });
    };
    if (candidates) for (const index of candidates) visit(index);
    else for (let index = 0; index < this.size; index++) visit(index);
    hits.sort(
      (x, y) => y.rawScore - x.rawScore || (x.memoryId < y.memoryId ? -1 : x.memoryId > y.memoryId ? 1 : 0),
    );
    return hits.slice(0, limit);
  }
}

interface Ivf {
  centroids: Float32Array;
  nlist: number;
  nprobe: number;
  lists: number[][];
}

function buildIvf(matrix: Float32Array, n: number, dims: number): Ivf {
  const nlist = Math.ceil(Math.sqrt(n));
  const sampleSize = Math.min(n, nlist * 32);
  const sample = Array.from({ length: sampleSize }, (_, i) => Math.floor((i * n) / sampleSize));
  const centroids = new Float32Array(nlist * dims);
  for (let c = 0; c < nlist; c++) {
    const row = Math.floor((c * n) / nlist);
    centroids.set(matrix.subarray(row * dims, row * dims + dims), c * dims);
  }
  for (let round = 0; round < 8; round++) {
    const sums = new Float32Array(nlist * dims);
    for (const row of sample) {
      const c = nearestCentroid(centroids, nlist, matrix, row * dims, dims);
      for (let d = 0; d < dims; d++) sums[c * dims + d]! += matrix[row * dims + d]!;
    }
    for (let c = 0; c < nlist; c++) {
      // An empty cluster keeps its previous centroid (its sum is zero and normalising would erase it).
      if (norm(sums, c * dims, dims) > 0)
        writeUnit(sums.subarray(c * dims, c * dims + dims), centroids, c * dims);
    }
  }
  const lists: number[][] = Array.from({ length: nlist }, () => []);
  for (let row = 0; row < n; row++)
    lists[nearestCentroid(centroids, nlist, matrix, row * dims, dims)]!.push(row);
  return { centroids, nlist, nprobe: Math.max(8, Math.ceil(nlist / 8)), lists };
}

function probeRows(ivf: Ivf, unit: Float32Array, dims: number): number[] {
  const order = Array.from({ length: ivf.nlist }, (_, c) => ({
    c,
    score: dot(unit, ivf.centroids, c * dims, dims),
  }));
  order.sort((x, y) => y.score - x.score);
  return order.slice(0, ivf.nprobe).flatMap(({ c }) => ivf.lists[c]!);
}

function nearestCentroid(
  centroids: Float32Array,
  nlist: number,
  matrix: Float32Array,
  offset: number,
  dims: number,
): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < nlist; c++) {
    let score = 0;
    const base = c * dims;
    for (let d = 0; d < dims; d++) score += centroids[base + d]! * matrix[offset + d]!;
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

function dot(unit: Float32Array, matrix: Float32Array, offset: number, dims: number): number {
  let sum = 0;
  for (let d = 0; d < dims; d++) sum += unit[d]! * matrix[offset + d]!;
  return sum;
}

function norm(values: Float32Array, offset: number, dims: number): number {
  let sum = 0;
  for (let d = 0; d < dims; d++) sum += values[offset + d]! * values[offset + d]!;
  return Math.sqrt(sum);
}

/** Writes vector / |vector| at `offset`; a zero vector stays zero (cosine 0 with everything). */
function writeUnit(vector: Float32Array, target: Float32Array, offset: number): void {
  const length = norm(vector, 0, vector.length);
  for (let d = 0; d < vector.length; d++) target[offset + d] = length > 0 ? vector[d]! / length : 0;
}

function dimensionError(expected: number, actual: number): GraphmemixError {
  return new GraphmemixError('INVALID_INPUT', `vector has ${actual} dimensions, the space has ${expected}`, {
    details: { expected, actual },
  });
}
