/**
 * Bounded in-process read caches' building blocks, shared by the SQLite edge cache, the PostgreSQL edge lists
 * and the question path's records (src/pipeline/pool-records.ts).
 */

/** Share of the budget an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;

/**
 * A group key naming a read generation and a context (each part's length first: unambiguous whatever
 * characters they hold).
 */
export function generationGroup(generation: string, contextId: string): string {
  return `${generation.length}:${generation}${contextId.length}:${contextId}`;
}

/**
 * A Map bounded by an estimate of its values' bytes (keys counted too), evicting in insertion order. Keys have
 * two parts, a group (a context, a read generation and context) and an item (a memory id) in it: lookups by
 * one string built as group + item made V8 flatten and hash a new concatenated string per lookup (~0.4 us,
 * ~150 lookups a warm question at 10k), where the group's Map is found once per call and items are ids
 * the caller already holds. Each entry keeps its estimate, so an eviction does not measure the value again.
 */
export class BoundedMap<T> {
  private readonly groups = new Map<string, Map<string, BoundedEntry<T>>>();
  /**
   * Entries in insertion order from `head` on; the slots before it are emptied as their entries go (so an
   * evicted value is not kept alive until the next compaction) and dropped now and then.
   */
  private order: (BoundedEntry<T> | undefined)[] = [];
  private head = 0;
  private count = 0;
  private bytes = 0;

  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: T) => number,
  ) {}

  /** The group's entries for a run of lookups (undefined when it has none): find it once, then `item`. */
  group(group: string): BoundedGroup<T> | undefined {
    return this.groups.get(group);
  }

  get(group: string, item: string): T | undefined {
    return this.groups.get(group)?.get(item)?.value;
  }

  set(group: string, item: string, value: T): void {
    let entries = this.groups.get(group);
    if (entries?.has(item)) return;
    const bytes = this.sizeOf(value) + 2 * (group.length + item.length);
    if (bytes > this.budget / 64) return;
    if (!entries) {
      entries = new Map();
      this.groups.set(group, entries);
    }
    const entry = { group, item, value, bytes };
    entries.set(item, entry);
    this.order.push(entry);
    this.count++;
    this.bytes += bytes;
    if (this.bytes > this.budget) this.evict();
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.groups.clear();
    this.order = [];
    this.head = 0;
    this.count = 0;
    this.bytes = 0;
  }

  private evict(): void {
    const target = this.budget * EVICT_TO;
    while (this.bytes > target && this.head < this.order.length) {
      const entry = this.order[this.head]!;
      this.order[this.head++] = undefined;
      const entries = this.groups.get(entry.group)!;
      entries.delete(entry.item);
      if (entries.size === 0) this.groups.delete(entry.group);
      this.count--;
      this.bytes -= entry.bytes;
    }
    // The evicted prefix goes once it is most of the array: the copy is never longer than what was evicted
    // since the last one, so amortised O(1) per entry.
    if (this.head > this.order.length / 2) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}

/** A group's entries: `get(item)?.value`. */
export type BoundedGroup<T> = ReadonlyMap<string, { readonly value: T }>;

interface BoundedEntry<T> {
  readonly group: string;
  readonly item: string;
  readonly value: T;
  readonly bytes: number;
}
