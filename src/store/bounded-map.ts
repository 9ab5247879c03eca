/**
 * Bounded in-process read caches' building blocks, shared by the SQLite edge cache, the PostgreSQL edge lists
 * and the question path's records (src/pipeline/pool-records.ts).
 */

/** Share of the budget an eviction leaves: batches amortise the walk. */
const EVICT_TO = 0.875;

/** Cache key of a memory (the context's length first: unambiguous whatever characters the ids hold). */
export function memoryKey(contextId: string, memoryId: string): string {
  // A question's ~150 lookups share one context: its prefix is formatted once, not per lookup.
  if (contextId !== keyContext) {
    keyContext = contextId;
    keyPrefix = `${contextId.length}:${contextId}`;
  }
  return keyPrefix + memoryId;
}

let keyContext = '';
let keyPrefix = '0:';

/**
 * A Map bounded by an estimate of its values' bytes (keys counted too), evicting in insertion order. Each
 * entry keeps its estimate, so an eviction does not measure the value again.
 */
export class BoundedMap<T> {
  private readonly entries = new Map<string, { value: T; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: T) => number,
  ) {}

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, value: T): void {
    if (this.entries.has(key)) return;
    const bytes = this.sizeOf(value) + 2 * key.length;
    if (bytes > this.budget / 64) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    if (this.bytes > this.budget) this.evict();
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private evict(): void {
    const target = this.budget * EVICT_TO;
    for (const [key, entry] of this.entries) {
      if (this.bytes <= target) break;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}
