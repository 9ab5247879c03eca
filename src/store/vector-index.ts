import { GraphmemixError } from '../errors/graphmemix-error.ts';
import type { ViewHit, ViewKind } from '../types/view.ts';
import type { VectorRow, VectorSearchOptions } from './archive-store-spec.ts';
import { rankVectorHits, type VectorRowKey, vectorRowKey } from './store-rules.ts';

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
 *
 * The index can be kept up to date instead of rebuilt (`upsert`, `remove`: a store applying the rows written
 * since it was built): a row with the key (memory, kind, key) of a held one replaces it in place, a new one is
 * appended and joins its nearest centroid's list. Removed rows leave holes, and the IVF is trained on the rows
 * it was built from; both are rebuilt from the live rows once the holes reach half of them or the rows have
 * doubled since the last build (amortised constant per row), so exact results never depend on the history and
 * approximate ones only on which rows the last build saw.
 */
export class VectorIndex {
  dims: number;
  /** Row per slot; undefined = a removed row's hole. */
  private rows: Array<VectorRow | undefined> = [];
  /** Unit-normalised copy of every slot's vector, row-major (capacity >= rows.length). */
  private matrix = new Float32Array(0);
  private ivf: Ivf | undefined;
  /** Live rows when the slots were last laid out (the constructor or a rebuild). */
  private builtLive = 0;
  private live = 0;
  /** memory id -> its slots, for searches restricted to a filtered candidate set. */
  private readonly byMemory = new Map<string, number[]>();
  /** (memory id, kind, key) -> slot. */
  private readonly byKey = new Map<string, number>();
  private readonly threshold: number;

  constructor(rows: readonly VectorRow[], options: { approximateAbove?: number } = {}) {
    this.threshold = options.approximateAbove ?? APPROXIMATE_VECTOR_THRESHOLD;
    this.dims = rows[0]?.vector.length ?? 0;
    this.layOut(rows);
  }

  get approximate(): boolean {
    return this.ivf !== undefined;
  }

  /** Live rows. */
  get size(): number {
    return this.live;
  }

  /** Adds rows, or replaces the held row of the same (memory, kind, key). */
  upsert(rows: readonly VectorRow[]): void {
    for (const row of rows) {
      if (this.dims === 0) this.dims = row.vector.length;
      if (row.vector.length !== this.dims) throw dimensionError(this.dims, row.vector.length);
      const key = vectorRowKey(row);
      let slot = this.byKey.get(key);
      if (slot === undefined) {
        slot = this.rows.length;
        this.rows.push(row);
        this.byKey.set(key, slot);
        const slots = this.byMemory.get(row.memoryId);
        if (slots) slots.push(slot);
        else this.byMemory.set(row.memoryId, [slot]);
        this.live++;
        this.reserve(this.rows.length);
      } else {
        this.rows[slot] = row;
        if (this.ivf) removeFromList(this.ivf, slot);
      }
      writeUnit(row.vector, this.matrix, slot * this.dims);
      if (this.ivf) addToList(this.ivf, this.matrix, slot, this.dims);
    }
    this.maybeRebuild();
  }

  /** Removes the rows of these (memory, kind, key); returns how many it held. */
  remove(rows: readonly VectorRowKey[]): number {
    let removed = 0;
    for (const row of rows) {
      const key = vectorRowKey(row);
      const slot = this.byKey.get(key);
      if (slot === undefined) continue;
      this.byKey.delete(key);
      this.rows[slot] = undefined;
      const slots = this.byMemory.get(row.memoryId)!.filter((other) => other !== slot);
      if (slots.length > 0) this.byMemory.set(row.memoryId, slots);
      else this.byMemory.delete(row.memoryId);
      if (this.ivf) removeFromList(this.ivf, slot);
      this.live--;
      removed++;
    }
    this.maybeRebuild();
    return removed;
  }

  search(query: Float32Array, options: VectorSearchOptions): ViewHit[] {
    if (this.live === 0 || options.limit <= 0) return [];
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
      const row = this.rows[index];
      if (row === undefined || (kinds && !kinds.has(row.kind))) return;
      hits.push({
        memoryId: row.memoryId,
        kind: row.kind,
        key: row.key,
        rawScore: dot(unit, this.matrix, index * this.dims, this.dims),
      });
    };
    if (candidates) for (const index of candidates) visit(index);
    else for (let index = 0; index < this.rows.length; index++) visit(index);
    // A total order (a memory's rows of equal score by kind, then key): the same rows rank the same whatever
    // their slots.
    return rankVectorHits(hits, limit);
  }

  /** Slots for `rows` (holes dropped), the IVF when above the threshold. */
  private layOut(rows: ReadonlyArray<VectorRow | undefined>): void {
    const kept = rows.filter((row): row is VectorRow => row !== undefined);
    this.rows = [];
    this.byMemory.clear();
    this.byKey.clear();
    this.matrix = new Float32Array(kept.length * this.dims);
    kept.forEach((row, slot) => {
      if (row.vector.length !== this.dims) throw dimensionError(this.dims, row.vector.length);
      this.rows.push(row);
      this.byKey.set(vectorRowKey(row), slot);
      const slots = this.byMemory.get(row.memoryId);
      if (slots) slots.push(slot);
      else this.byMemory.set(row.memoryId, [slot]);
      writeUnit(row.vector, this.matrix, slot * this.dims);
    });
    this.live = kept.length;
    this.builtLive = kept.length;
    this.ivf = kept.length > this.threshold ? buildIvf(this.matrix, kept.length, this.dims) : undefined;
  }

  private maybeRebuild(): void {
    const holes = this.rows.length - this.live;
    const crossed = this.ivf === undefined && this.live > this.threshold;
    const grown = this.ivf !== undefined && this.live > 2 * this.builtLive;
    if (crossed || grown || (holes > 64 && holes > this.live / 2)) this.layOut(this.rows);
  }

  private reserve(slots: number): void {
    if (this.matrix.length >= slots * this.dims) return;
    const capacity = this.matrix.length / Math.max(1, this.dims);
    const grown = new Float32Array(Math.max(slots, Math.ceil(capacity * 1.5) + 16) * this.dims);
    grown.set(this.matrix);
    this.matrix = grown;
  }
}

interface Ivf {
  centroids: Float32Array;
  nlist: number;
  nprobe: number;
  lists: number[][];
  /** Slot -> its list, -1 or absent for none (rows appended after the build join the nearest centroid's). */
  listOf: number[];
}

function addToList(ivf: Ivf, matrix: Float32Array, slot: number, dims: number): void {
  const c = nearestCentroid(ivf.centroids, ivf.nlist, matrix, slot * dims, dims);
  ivf.lists[c]!.push(slot);
  ivf.listOf[slot] = c;
}

function removeFromList(ivf: Ivf, slot: number): void {
  const c = ivf.listOf[slot] ?? -1;
  if (c < 0) return;
  const list = ivf.lists[c]!;
  list.splice(list.indexOf(slot), 1);
  ivf.listOf[slot] = -1;
}

function buildIvf(matrix: Float32Array, n: number, dims: number): Ivf {
  const nlist = ivfListCount(n);
  const sampleSize = Math.min(n, nlist * IVF_SAMPLE_PER_LIST);
  const sample = new Float32Array(sampleSize * dims);
  for (let i = 0; i < sampleSize; i++) {
    const row = Math.floor((i * n) / sampleSize);
    sample.set(matrix.subarray(row * dims, row * dims + dims), i * dims);
  }
  const centroids = trainCentroids(sample, sampleSize, nlist, dims);
  const lists: number[][] = Array.from({ length: nlist }, () => []);
  const listOf = new Array<number>(n);
  for (let row = 0; row < n; row++) {
    const c = nearestCentroid(centroids, nlist, matrix, row * dims, dims);
    lists[c]!.push(row);
    listOf[row] = c;
  }
  return { centroids, nlist, nprobe: ivfProbeCount(nlist), lists, listOf };
}

/** Rows of the training sample per centroid (the sample is evenly spaced over the rows). */
export const IVF_SAMPLE_PER_LIST = 32;

/** Centroids for n rows: ceil(sqrt(n)). */
export function ivfListCount(n: number): number {
  return Math.ceil(Math.sqrt(n));
}

/** Lists a query scans: an eighth of them, at least 8. */
export function ivfProbeCount(nlist: number): number {
  return Math.max(8, Math.ceil(nlist / 8));
}

/**
 * Spherical k-means over unit-normalised sample rows (row-major): nlist centroids initialised from evenly
 * spaced sample rows, 8 rounds. Deterministic: the same sample gives the same centroids.
 */
export function trainCentroids(
  sample: Float32Array,
  count: number,
  nlist: number,
  dims: number,
): Float32Array {
  const centroids = new Float32Array(nlist * dims);
  for (let c = 0; c < nlist; c++) {
    const row = Math.floor((c * count) / nlist);
    centroids.set(sample.subarray(row * dims, row * dims + dims), c * dims);
  }
  for (let round = 0; round < 8; round++) {
    const sums = new Float32Array(nlist * dims);
    for (let row = 0; row < count; row++) {
      const c = nearestCentroid(centroids, nlist, sample, row * dims, dims);
      for (let d = 0; d < dims; d++) sums[c * dims + d]! += sample[row * dims + d]!;
    }
    for (let c = 0; c < nlist; c++) {
      // An empty cluster keeps its previous centroid (its sum is zero and normalising would erase it).
      if (norm(sums, c * dims, dims) > 0)
        writeUnit(sums.subarray(c * dims, c * dims + dims), centroids, c * dims);
    }
  }
  return centroids;
}

function probeRows(ivf: Ivf, unit: Float32Array, dims: number): number[] {
  const order = Array.from({ length: ivf.nlist }, (_, c) => ({
    c,
    score: dot(unit, ivf.centroids, c * dims, dims),
  }));
  order.sort((x, y) => y.score - x.score);
  return order.slice(0, ivf.nprobe).flatMap(({ c }) => ivf.lists[c]!);
}

/**
 * The centroid with the largest dot product with the row at `offset` (lowest index on ties). Four running sums:
 * the training's hot loop (n rows x nlist centroids), 1.5x faster than one sum.
 */
export function nearestCentroid(
  centroids: Float32Array,
  nlist: number,
  matrix: Float32Array,
  offset: number,
  dims: number,
): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  const whole = dims - (dims % 4);
  for (let c = 0; c < nlist; c++) {
    const base = c * dims;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let d = 0;
    for (; d < whole; d += 4) {
      s0 += centroids[base + d]! * matrix[offset + d]!;
      s1 += centroids[base + d + 1]! * matrix[offset + d + 1]!;
      s2 += centroids[base + d + 2]! * matrix[offset + d + 2]!;
      s3 += centroids[base + d + 3]! * matrix[offset + d + 3]!;
    }
    for (; d < dims; d++) s0 += centroids[base + d]! * matrix[offset + d]!;
    const score = s0 + s1 + s2 + s3;
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

export function dot(unit: Float32Array, matrix: Float32Array, offset: number, dims: number): number {
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
export function writeUnit(vector: Float32Array, target: Float32Array, offset: number): void {
  const length = norm(vector, 0, vector.length);
  for (let d = 0; d < vector.length; d++) target[offset + d] = length > 0 ? vector[d]! / length : 0;
}

function dimensionError(expected: number, actual: number): GraphmemixError {
  return new GraphmemixError('INVALID_INPUT', `vector has ${actual} dimensions, the space has ${expected}`, {
    details: { expected, actual },
  });
}
