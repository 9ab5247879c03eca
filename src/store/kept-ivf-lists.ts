import type { ViewHit, ViewKind } from '../types/view.ts';
import { compareVectorRows, rankVectorHits, type VectorRowKey, vectorRowKey } from './store-rules.ts';
import { dot, writeUnit } from './vector-index.ts';

/** A stored blob as float32 (copied when the driver's buffer is not 4-byte aligned). */
export function toFloats(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
  const bytes = new Uint8Array(blob.byteLength);
  bytes.set(blob);
  return new Float32Array(bytes.buffer);
}

/** Stored rows (unit float32) the kept lists of one store may hold, all spaces together. */
export const KEPT_FLOATS = 64 * 1024 * 1024;

/** memory_id, kind, key, vector, list. */
export type StoredRow = [string, ViewKind, string, Buffer, number | null];

/** One list's rows as this process read them: keys, and unit vectors in one growing matrix. */
class KeptList {
  private rows: Array<VectorRowKey | undefined> = [];
  private matrix = new Float32Array(0);
  private readonly slots = new Map<string, number>();
  private dims = 0;

  /** A row not held (KeptSpace removes it from every list first). */
  put(rowKey: string, row: VectorRowKey, vector: Float32Array): void {
    const dims = vector.length;
    this.dims = dims;
    const slot = this.rows.length;
    if (this.matrix.length < (slot + 1) * dims) {
      // A quarter more each time: the budget counts rows, and the slack stays within a quarter of them.
      const grown = new Float32Array(Math.max(16, Math.ceil(1.25 * (slot + 1))) * dims);
      grown.set(this.matrix);
      this.matrix = grown;
    }
    writeUnit(vector, this.matrix, slot * dims);
    this.slots.set(rowKey, slot);
    this.rows.push(row);
  }

  /** The keys of the rows it holds. */
  heldKeys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Floats of its slots, removed rows' included (what evicting it frees). */
  get floats(): number {
    return this.rows.length * this.dims;
  }

  /** Removes a row; whether it held it. */
  remove(rowKey: string): boolean {
    const slot = this.slots.get(rowKey);
    if (slot === undefined) return false;
    this.slots.delete(rowKey);
    this.rows[slot] = undefined;
    return true;
  }

  score(unit: Float32Array, kinds: Set<ViewKind> | undefined, into: TopHits): void {
    const dims = unit.length;
    for (let slot = 0; slot < this.rows.length; slot++) {
      const row = this.rows[slot];
      if (row === undefined || (kinds && !kinds.has(row.kind))) continue;
      into.offer(dot(unit, this.matrix, slot * dims, dims), row);
    }
  }
}

/**
 * The `limit` best hits offered, by score then (memory, kind, key) as VectorIndex ranks them: a min-heap on
 * "worse", so a search of a few thousand rows makes `limit` hit objects and sorts `limit` of them.
 */
export class TopHits {
  private readonly heap: ViewHit[] = [];

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.heap.length;
  }

  offer(rawScore: number, row: VectorRowKey): void {
    const heap = this.heap;
    if (heap.length === this.limit) {
      const root = heap[0]!;
      if (rawScore < root.rawScore || (rawScore === root.rawScore && compareVectorRows(row, root) >= 0))
        return;
      heap[0] = { memoryId: row.memoryId, kind: row.kind, key: row.key, rawScore };
      this.down(0);
      return;
    }
    heap.push({ memoryId: row.memoryId, kind: row.kind, key: row.key, rawScore });
    let at = heap.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!worse(heap[at]!, heap[parent]!)) break;
      [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
      at = parent;
    }
  }

  sorted(): ViewHit[] {
    return rankVectorHits([...this.heap], this.limit);
  }

  private down(at: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let worst = at;
      if (left < heap.length && worse(heap[left]!, heap[worst]!)) worst = left;
      if (right < heap.length && worse(heap[right]!, heap[worst]!)) worst = right;
      if (worst === at) return;
      [heap[at], heap[worst]] = [heap[worst]!, heap[at]!];
      at = worst;
    }
  }
}

/** x ranks after y. */
function worse(x: ViewHit, y: ViewHit): boolean {
  return x.rawScore < y.rawScore || (x.rawScore === y.rawScore && compareVectorRows(x, y) > 0);
}

/** The kept lists of one (context, space) at one IVF generation. */
export class KeptSpace {
  version = -1;
  /** Rows were applied since lists were read: some may have been deleted since (checked per search). */
  caughtUp = false;
  readonly lists = new Map<number, KeptList>();
  /** Floats held by the kept rows (the cache's budget counts these). */
  floats = 0;
  /** Row key -> the kept list holding it. */
  private readonly listOf = new Map<string, number>();

  constructor(readonly generation: number) {}

  put([memoryId, kind, key, vector, list]: StoredRow): void {
    const rowKey = vectorRowKey({ memoryId, kind, key });
    this.remove(rowKey);
    if (list === null) return;
    const target = this.lists.get(list);
    if (target === undefined) return; // not read yet: a later read of that list finds the row
    target.put(rowKey, { memoryId, kind, key }, toFloats(vector));
    this.listOf.set(rowKey, list);
    this.floats += vector.byteLength / 4;
  }

  remove(rowKey: string): boolean {
    const list = this.listOf.get(rowKey);
    if (list === undefined) return false;
    // A removed row's slot stays until the list is read again (the budget counts it until then).
    this.lists.get(list)?.remove(rowKey);
    this.listOf.delete(rowKey);
    return true;
  }

  /** An empty kept list, about to be filled by a read of its rows. */
  open(list: number): void {
    this.lists.set(list, new KeptList());
  }

  /** Marks a list as just searched (eviction takes the least recently searched first). */
  touch(list: number): KeptList {
    const kept = this.lists.get(list)!;
    this.lists.delete(list);
    this.lists.set(list, kept);
    return kept;
  }

  /** Drops the least recently searched list (there is one); returns the floats freed. */
  evictOldest(): number {
    const [list, kept] = this.lists.entries().next().value!;
    for (const rowKey of kept.heldKeys()) this.listOf.delete(rowKey);
    this.lists.delete(list);
    this.floats -= kept.floats;
    return kept.floats;
  }

  reset(): void {
    this.lists.clear();
    this.listOf.clear();
    this.floats = 0;
    this.caughtUp = false;
  }
}

/**
 * The lists of stored IVFs a process keeps (sqlite-stored-ivf.ts), per (context, space) and IVF generation,
 * within a budget of floats: beyond it other spaces go first, then the searched space's least recently searched
 * lists.
 */
export class KeptIvfLists {
  private readonly spaces = new Map<string, KeptSpace>();

  constructor(private readonly budget: number) {}

  entry(contextId: string, space: string, generation: number): KeptSpace {
    const key = `${contextId}\u0000${space}`;
    let kept = this.spaces.get(key);
    this.spaces.delete(key);
    if (kept === undefined || kept.generation !== generation) kept = new KeptSpace(generation);
    this.spaces.set(key, kept);
    return kept;
  }

  /** After a search of `current`: other spaces go first, then `current`'s least recently searched lists. */
  trim(current: KeptSpace): void {
    let total = 0;
    for (const kept of this.spaces.values()) total += kept.floats;
    for (const [key, kept] of this.spaces) {
      if (total <= this.budget) return;
      if (kept === current) continue;
      total -= kept.floats;
      this.spaces.delete(key);
    }
    while (total > this.budget && current.lists.size > 0) total -= current.evictOldest();
  }

  clear(): void {
    this.spaces.clear();
  }
}
